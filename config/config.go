package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/corral-db/corral/internal/zktls"
)

// ErrInvalid is wrapped by every error that reports a bad configuration
// (as opposed to an I/O failure): errors.Is(err, config.ErrInvalid).
var ErrInvalid = errors.New("invalid configuration")

// KeyError reports a zoo.cfg key whose value cannot be used. Key is spelled
// as in the file.
type KeyError struct {
	Key     string
	Value   string
	Missing bool // the key is absent; Value is meaningless
	Reason  string
}

func (e *KeyError) Error() string {
	if e.Missing {
		return fmt.Sprintf("%s: %s", e.Key, e.Reason)
	}
	return fmt.Sprintf("%s=%q: %s", e.Key, e.Value, e.Reason)
}

// Unwrap makes every KeyError an ErrInvalid.
func (e *KeyError) Unwrap() error { return ErrInvalid }

// Durability says when a follower may acknowledge a proposal; see
// DESIGN.md "Durability modes".
type Durability string

const (
	// DurabilitySync acknowledges after the log record is fsynced
	// (group commit). ZooKeeper's behaviour with forceSync=yes.
	DurabilitySync Durability = "sync"
	// DurabilityAsync acknowledges once the record is written to the OS.
	// ZooKeeper's behaviour with forceSync=no.
	DurabilityAsync Durability = "async"
	// DurabilityDiskless acknowledges once the proposal is in memory; no
	// transaction log, busy snapshots instead.
	DurabilityDiskless Durability = "diskless"
)

// rlog.groupCommit values (Config.RlogGroupCommit).
const (
	RlogGroupCommitDecoupled = "decoupled"
	RlogGroupCommitCoupled   = "coupled"
)

// ZooKeeper's defaults, as QuorumPeerConfig and the system properties it
// feeds have them in 3.9.
const (
	DefaultTickTime                 = 3000 // ZooKeeperServer.DEFAULT_TICK_TIME
	DefaultSnapCount                = 100000
	DefaultAutopurgeSnapRetainCount = 3
	MinAutopurgeSnapRetainCount     = 3 // PurgeTxnLog will not keep fewer
	MinSnapCount                    = 2 // ZooKeeperServer.getSnapCount resets lower values to 2
	// DefaultSnapSizeLimitKB is corral's default snapSizeLimitInKb, 64
	// MiB. ZooKeeper's is 4 GiB of log files, which it only keeps on
	// disk; corral keeps the log since the last snapshot in memory too
	// (learners catch up from it), so its default bounds that memory.
	DefaultSnapSizeLimitKB          = 64 << 10
	DefaultMaxClientCnxns           = 60
	DefaultGlobalOutstandingLimit   = 1000
	DefaultJuteMaxBuffer            = 0xfffff
	DefaultContainerCheckIntervalMs = 60000
	DefaultContainerMaxPerMinute    = 10000
	// DefaultClientListenHost is where corral accepts clients when neither
	// clientPortAddress nor a client address on this server's server.N
	// line says otherwise. DELIBERATE DIVERGENCE: ZooKeeper binds the
	// wildcard address (all interfaces) in that case; corral binds only
	// loopback so that a server started from a sample zoo.cfg is not
	// exposed to the network by accident. Set clientPortAddress=0.0.0.0
	// to get ZooKeeper's behaviour.
	DefaultClientListenHost = "127.0.0.1"
	// MaxServerID is the largest server id (myid) corral accepts: session
	// ids carry the server id in their top byte, as in ZooKeeper, whose
	// documentation asks for ids between 1 and 255.
	MaxServerID = 255
	// MaxExtendedTypesServerID is the largest server id allowed with
	// extendedTypesEnabled (EphemeralType.validateServerId): TTL node
	// owners use the 0xff top byte.
	MaxExtendedTypesServerID = 254

	// PrometheusMetricsProvider is the metricsProvider.className that
	// turns on the Prometheus endpoint; DefaultMetricsProvider (ZooKeeper's
	// default, which feeds mntr only) and NullMetricsProvider leave it
	// off. mntr is served whatever the provider.
	PrometheusMetricsProvider = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"
	DefaultMetricsProvider    = "org.apache.zookeeper.metrics.impl.DefaultMetricsProvider"
	NullMetricsProvider       = "org.apache.zookeeper.metrics.impl.NullMetricsProvider"
	// DefaultMetricsHTTPPort is metricsProvider.httpPort's default.
	DefaultMetricsHTTPPort = 7000
	// DefaultAdminServerPort and DefaultAdminCommandURL are the
	// AdminServer's defaults (JettyAdminServer).
	DefaultAdminServerPort = 8080
	DefaultAdminCommandURL = "/commands"
	// DefaultAdminIdleTimeoutMs is admin.idleTimeout's default.
	DefaultAdminIdleTimeoutMs = 30000
	// DefaultAdminRateLimiterIntervalMs is admin.rateLimiterIntervalInMS's
	// default: at most one snapshot or restore command per interval.
	DefaultAdminRateLimiterIntervalMs = 300000
	// DefaultHTTPListenHost is where the metrics endpoint and the
	// AdminServer listen when no address is configured. DELIBERATE
	// DIVERGENCE, as DefaultClientListenHost: ZooKeeper binds 0.0.0.0.
	DefaultHTTPListenHost = "127.0.0.1"
)

// defaultFourLetterWords is what ZooKeeper enables without
// 4lw.commands.whitelist; srvr is enabled whatever the whitelist says.
var defaultFourLetterWords = []string{"srvr"}

// Config is a parsed zoo.cfg. Times are in milliseconds unless the field
// says otherwise; the names follow ZooKeeper's keys.
type Config struct {
	TickTime  int // tickTime, ms; default 3000
	InitLimit int // initLimit, ticks; required in an ensemble
	SyncLimit int // syncLimit, ticks; required in an ensemble

	// DataDir holds snapshots, the myid file and epochs. Load makes it
	// absolute against the process's working directory, as ZooKeeper's
	// java.io.File does; Parse leaves it as written.
	DataDir string
	// DataLogDir holds the transaction log; defaults to DataDir.
	DataLogDir string

	// ClientPort is clientPort; 0 means unset (then this server's server.N
	// line must carry a client port).
	ClientPort int
	// ClientPortAddress is clientPortAddress, "" when unset. Unset, corral
	// listens on DefaultClientListenHost (127.0.0.1), NOT on all
	// interfaces as ZooKeeper does: see DefaultClientListenHost.
	ClientPortAddress string

	// Store is the state machine the server runs: "" or "znode" for the
	// ZooKeeper-protocol service, "kv" for the key-value store (ACaZoo),
	// whose gRPC API listens on APIPortAddress:APIPort.
	Store string
	// APIPort is apiPort: where this server serves its gRPC APIs; 0 means
	// unset.
	APIPort int
	// APIPortAddress is apiPortAddress, "" meaning 127.0.0.1.
	APIPortAddress string
	// KVLeaderPolicy is kv.leaderPolicy, the compaction-aware leader
	// change of store=kv: fixed, random, roundrobin or coolest; "" is
	// fixed (the leader never moves for compaction).
	KVLeaderPolicy string
	// KVLeaderChangeThreshold is kv.leaderChangeThreshold: the heat
	// (compaction due at 1) at which a leader hands over; 0, unset, is
	// the store's default (1).
	KVLeaderChangeThreshold float64
	// KVLeaderChangeMinIntervalMs is kv.leaderChangeMinIntervalMs: the
	// least time between two leader changes; 0, unset, is the store's
	// default (30 s).
	KVLeaderChangeMinIntervalMs int64
	// KVMemTableSize is kv.memTableSize: pebble's memtable size in bytes
	// (K, M, G suffixes as memory.limit); 0 is the kv server's default (16 MiB
	// and a quarter more per member id, so that members flush apart).
	KVMemTableSize int64
	// KVRowCacheSize is kv.rowCacheSize: the bytes of rows a replica
	// group's store keeps for plain reads (K, M, G suffixes); 0, unset,
	// is the store's default (32 MiB); -1, written "off" or 0, none.
	KVRowCacheSize int64
	// APIAddrs are the apiAddress.N=host:port lines: every member's API
	// address, which a member that does not lead names in its NotLeader
	// answers.
	APIAddrs map[int64]string

	// Servers are the server.N lines, sorted by ID.
	Servers []Server
	// MyID is this server's id from dataDir/myid; 0 when there is none
	// (fine for a standalone server). Only Load reads it.
	MyID int64

	StandaloneEnabled bool // standaloneEnabled; default true
	ReconfigEnabled   bool // reconfigEnabled; default false
	// ConfigVersion is the version of the servers' configuration: the
	// zxid of the reconfig that made it, read from the dynamic file (its
	// version line, else its name's suffix); 0 for a static one.
	ConfigVersion int64
	// DynamicConfigFile is dynamicConfigFile as given ("" without one).
	DynamicConfigFile string
	// NextServers and NextConfigVersion are the configuration of
	// <static>.dynamic.next, when Load found one newer than ConfigVersion
	// beside a dynamicConfigFile: a reconfig proposal this member accepted
	// and had not seen committed (ZooKeeper's lastSeenQuorumVerifier).
	NextServers          []Server
	NextConfigVersion    int64
	SyncEnabled          bool // syncEnabled: observers log txns; default true
	QuorumListenOnAllIPs bool // quorumListenOnAllIPs; default false

	SnapCount int // snapCount; default 100000, at least 2
	// SnapSizeLimitKB is snapSizeLimitInKb: a snapshot starts once the
	// log written since the last one holds between half this many KiB
	// and all of them; 0 or less: no byte trigger. Default
	// DefaultSnapSizeLimitKB (not ZooKeeper's 4 GiB).
	SnapSizeLimitKB int64

	AutopurgeSnapRetainCount int // autopurge.snapRetainCount; default 3, at least 3
	AutopurgePurgeInterval   int // autopurge.purgeInterval, hours; 0 disables

	MaxClientCnxns    int // maxClientCnxns per client IP; default 60, 0 unlimited
	MinSessionTimeout int // minSessionTimeout; default 2*TickTime
	MaxSessionTimeout int // maxSessionTimeout; default 20*TickTime

	GlobalOutstandingLimit int // globalOutstandingLimit; default 1000
	// JuteMaxBuffer is jute.maxbuffer, the largest record (znode data,
	// request) in bytes; default 0xfffff. ZooKeeper reads it only as a JVM
	// system property (-Djute.maxbuffer), so in ZooKeeper's zoo.cfg it has
	// no effect; corral honours it in zoo.cfg. JVMFlags carries it over.
	JuteMaxBuffer int

	// FourLetterWordWhitelist is 4lw.commands.whitelist: the enabled
	// commands, always including "srvr" as ZooKeeper does; ["*"] enables
	// every command. Use FourLetterWordEnabled to test a command.
	FourLetterWordWhitelist []string

	// ForceSync is forceSync (yes/no); default yes. It selects the
	// durability when Durability is not given explicitly, and is false
	// whenever Durability is async or diskless. corral acts on Durability.
	ForceSync bool
	// Durability is corral's durability key (sync|async|diskless). Unset,
	// it is async if forceSync=no and sync otherwise.
	Durability Durability

	// MemoryLimit is corral's memory.limit key: the soft memory limit of
	// the server's process in bytes (the Go runtime's, as GOMEMLIMIT),
	// written as an integer with an optional K, M, G or T suffix (powers
	// of 1024). 0, the default, is no limit; GOMEMLIMIT, if set, wins.
	MemoryLimit int64
	// RlogRoot is corral's rlog.root key: every znode directly under it
	// is a replicated log whose large entries live in a data log
	// (docs/design/rlog.md). Empty, the default, is no logs.
	RlogRoot string
	// RlogGroupCommit is corral's rlog.groupCommit key: how a member
	// makes a group of log appends durable. "decoupled" (the default,
	// written as ""): payloads are written as they arrive and a flusher
	// syncs the data log on its own while the commit records wait for
	// it; "coupled": no flusher, the data log's sync and the commit
	// records' sync are one step per group (the ZKRL thesis's baseline in
	// its Fig. 5.4).
	RlogGroupCommit string
	// RlogSegmentSize is corral's rlog.segmentSize key: the size of a
	// member's data-log segments, the unit in which the space of trimmed
	// and deleted entries is reclaimed. 0, the default, is 64 MiB.
	RlogSegmentSize int64
	// PurgeTimeMs and NumberToRetain are the diskless thesis's snapshot
	// purger keys (its Appendix A.3): every PurgeTime ms keep the newest
	// NumberToRetain snapshots. 0 leaves purging to autopurge.*.
	PurgeTimeMs    int64
	NumberToRetain int

	// ExtendedTypesEnabled is extendedTypesEnabled (TTL nodes).
	ExtendedTypesEnabled bool
	// EnforceQuota is enforceQuota: hard quota limits refuse writes
	// (QuotaExceeded), soft ones are logged (docs/design/quotas.md).
	EnforceQuota bool
	// AuditEnable is audit.enable: the audit log in ZooKeeper's format.
	// AuditLogFile is corral's audit.logFile, the file it goes to; unset,
	// zookeeper_audit.log in $ZOO_LOG_DIR or else in dataDir
	// (docs/design/audit.md).
	AuditEnable  bool
	AuditLogFile string
	// SuperDigest is DigestAuthenticationProvider.superDigest,
	// "user:base64(sha1(user:password))"; "" disables the super user.
	SuperDigest string

	// The container and TTL reaper, znode.container.*. Like jute.maxbuffer,
	// ZooKeeper reads these only as JVM system properties.
	ContainerCheckIntervalMs        int   // default 60000
	ContainerMaxPerMinute           int   // default 10000
	ContainerMaxNeverUsedIntervalMs int64 // default 0: never-used containers are not reaped

	// TLS (config/tls.go, docs/design/tls.md).
	//
	// SecureClientPort is secureClientPort, the TLS client port; 0 unset.
	// SecureClientPortAddress is secureClientPortAddress; unset, corral
	// listens on DefaultClientListenHost as for clientPort.
	SecureClientPort        int
	SecureClientPortAddress string
	// PortUnification is client.portUnification: the plaintext client
	// port also accepts TLS clients, told apart by their first byte.
	PortUnification bool
	// SSL is the ssl.* keys: the client ports' certificates and policy.
	SSL zktls.Settings
	// SSLQuorum is sslQuorum: members talk TLS with the ssl.quorum.* keys
	// (QuorumSSL), each side verifying the other's certificate.
	SSLQuorum bool
	QuorumSSL zktls.Settings
	// X509SuperUser is X509AuthenticationProvider.superUser: a client
	// whose certificate subject is this X.500 name is the super user.
	X509SuperUser string
	// Metrics is the metricsProvider.* configuration.
	Metrics MetricsConfig
	// Admin is the admin.* configuration (the AdminServer).
	Admin AdminConfig
}

// MetricsConfig is metricsProvider.*: ZooKeeper's Prometheus endpoint.
type MetricsConfig struct {
	// ClassName is metricsProvider.className; "" or NullMetricsProvider
	// disables the endpoint, PrometheusMetricsProvider enables it.
	ClassName string
	// HTTPHost is metricsProvider.httpHost, "" when unset (then corral
	// listens on DefaultHTTPListenHost, not 0.0.0.0 as ZooKeeper does).
	HTTPHost string
	// HTTPPort is metricsProvider.httpPort; default 7000.
	HTTPPort int
	// ExportJvmInfo is metricsProvider.exportJvmInfo; default true. corral
	// exports the Go runtime's and the process's collectors under it.
	ExportJvmInfo bool
}

// Enabled reports whether the Prometheus endpoint is on.
func (m MetricsConfig) Enabled() bool { return m.ClassName == PrometheusMetricsProvider }

// ListenAddr is the metrics endpoint's host:port.
func (m MetricsConfig) ListenAddr() string {
	return net.JoinHostPort(orDefault(m.HTTPHost, DefaultHTTPListenHost), strconv.Itoa(m.HTTPPort))
}

// AdminConfig is admin.*: ZooKeeper's AdminServer (HTTP JSON commands).
// ZooKeeper reads these as the system properties zookeeper.admin.*; both
// spellings are accepted.
type AdminConfig struct {
	// EnableServer is admin.enableServer; default true.
	EnableServer bool
	// ServerAddress is admin.serverAddress, "" when unset (then corral
	// listens on DefaultHTTPListenHost, not 0.0.0.0 as ZooKeeper does).
	ServerAddress string
	// ServerPort is admin.serverPort; default 8080.
	ServerPort int
	// CommandURL is admin.commandURL; default /commands.
	CommandURL string
	// IdleTimeoutMs is admin.idleTimeout; default 30000.
	IdleTimeoutMs int
	// RateLimiterIntervalMs is admin.rateLimiterIntervalInMS: the least
	// time between two snapshot or restore commands; default 300000.
	RateLimiterIntervalMs int
	// SnapshotEnabled and RestoreEnabled are admin.snapshot.enabled and
	// admin.restore.enabled; both default true.
	SnapshotEnabled bool
	RestoreEnabled  bool
	// ConsoleEnabled is admin.console.enabled (corral's own; default
	// true): the web console at /console on the AdminServer.
	// ConsoleWritable is admin.console.writable (default false): whether
	// the console may create, set and delete znodes (always through the
	// ACL checks, with the credentials its user gives).
	ConsoleEnabled  bool
	ConsoleWritable bool
	// ConsoleAdminAddrs is admin.console.adminAddresses (corral's own):
	// the other members' AdminServer addresses by server id,
	// "id=host:port,...", which the console asks for a leadership
	// transfer. Without it a member on another host is assumed to use
	// this server's admin.serverPort; one on the same host is unknown.
	ConsoleAdminAddrs map[int64]string
	// ConsoleKVEndpoints and ConsoleLogEndpoints are
	// admin.console.kvEndpoints and admin.console.logEndpoints (corral's
	// own): "host:port,...", the API addresses of a key-value replica
	// group and of the replicated logs, for the console's Key-value and
	// Logs pages; empty leaves the pages saying how to set them.
	ConsoleKVEndpoints  []string
	ConsoleLogEndpoints []string
}

// ListenAddr is the AdminServer's host:port.
func (a AdminConfig) ListenAddr() string {
	return net.JoinHostPort(orDefault(a.ServerAddress, DefaultHTTPListenHost), strconv.Itoa(a.ServerPort))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Server is one server.N line:
// server.N=host:quorumPort:electionPort[:participant|:observer][;[clientAddr:]clientPort]
type Server struct {
	ID           int64
	Host         string
	QuorumPort   int
	ElectionPort int
	Observer     bool
	// ClientAddr is the client address of the line's client part, "" when
	// the part gives only a port (ZooKeeper then binds 0.0.0.0, corral
	// DefaultClientListenHost) or is absent.
	ClientAddr string
	ClientPort int // 0 when the line has no client part
}

// APIListenAddr is apiPortAddress:apiPort.
func (c *Config) APIListenAddr() string {
	host := c.APIPortAddress
	if host == "" {
		host = DefaultClientListenHost
	}
	return net.JoinHostPort(host, strconv.Itoa(c.APIPort))
}

// QuorumAddr is host:quorumPort, where followers connect to the leader.
func (s Server) QuorumAddr() string {
	return net.JoinHostPort(s.Host, strconv.Itoa(s.QuorumPort))
}

// ElectionAddr is host:electionPort, where leader election runs.
func (s Server) ElectionAddr() string {
	return net.JoinHostPort(s.Host, strconv.Itoa(s.ElectionPort))
}

// Default returns a Config with every default ZooKeeper 3.9 applies and
// no dataDir, port or servers.
func Default() *Config {
	c := &Config{
		TickTime:                 DefaultTickTime,
		StandaloneEnabled:        true,
		SyncEnabled:              true,
		SnapCount:                DefaultSnapCount,
		SnapSizeLimitKB:          DefaultSnapSizeLimitKB,
		AutopurgeSnapRetainCount: DefaultAutopurgeSnapRetainCount,
		MaxClientCnxns:           DefaultMaxClientCnxns,
		GlobalOutstandingLimit:   DefaultGlobalOutstandingLimit,
		JuteMaxBuffer:            DefaultJuteMaxBuffer,
		FourLetterWordWhitelist:  append([]string(nil), defaultFourLetterWords...),
		ForceSync:                true,
		Durability:               DurabilitySync,
		ContainerCheckIntervalMs: DefaultContainerCheckIntervalMs,
		ContainerMaxPerMinute:    DefaultContainerMaxPerMinute,
		Metrics: MetricsConfig{
			HTTPPort:      DefaultMetricsHTTPPort,
			ExportJvmInfo: true,
		},
		Admin: AdminConfig{
			EnableServer:          true,
			ServerPort:            DefaultAdminServerPort,
			CommandURL:            DefaultAdminCommandURL,
			IdleTimeoutMs:         DefaultAdminIdleTimeoutMs,
			RateLimiterIntervalMs: DefaultAdminRateLimiterIntervalMs,
			SnapshotEnabled:       true,
			RestoreEnabled:        true,
			ConsoleEnabled:        true,
		},
		SSL:       zktls.Default(),
		QuorumSSL: zktls.Default(),
	}
	c.MinSessionTimeout = 2 * c.TickTime
	c.MaxSessionTimeout = 20 * c.TickTime
	return c
}

// Voters are the participants: the servers that vote and count toward
// quorums.
func (c *Config) Voters() []Server {
	var v []Server
	for _, s := range c.Servers {
		if !s.Observer {
			v = append(v, s)
		}
	}
	return v
}

// Distributed reports whether this is an ensemble rather than a
// standalone server: ZooKeeper's QuorumPeerConfig.isDistributed, true with
// more than one participant, or with standaloneEnabled=false.
func (c *Config) Distributed() bool {
	return !c.StandaloneEnabled || len(c.Voters()) > 1
}

// Self is this server's server.N line (the one whose ID is MyID), or nil.
func (c *Config) Self() *Server {
	if c.MyID == 0 {
		return nil
	}
	for i := range c.Servers {
		if c.Servers[i].ID == c.MyID {
			return &c.Servers[i]
		}
	}
	return nil
}

// ClientListenAddr is the host:port corral accepts clients on: the client
// address on this server's server.N line if it has one, as ZooKeeper's
// setupClientPort prefers, else clientPortAddress:clientPort. An unset
// host is DefaultClientListenHost (loopback), where ZooKeeper would bind
// all interfaces. "" if no client port is configured.
func (c *Config) ClientListenAddr() string {
	host, port := c.ClientPortAddress, c.ClientPort
	if s := c.Self(); s != nil && s.ClientPort != 0 {
		host, port = s.ClientAddr, s.ClientPort
	}
	if port == 0 {
		return ""
	}
	if host == "" {
		host = DefaultClientListenHost
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// FourLetterWordEnabled reports whether the four-letter word cmd (e.g.
// "ruok") may be served, per 4lw.commands.whitelist.
func (c *Config) FourLetterWordEnabled(cmd string) bool {
	for _, w := range c.FourLetterWordWhitelist {
		if w == "*" || w == cmd {
			return true
		}
	}
	return cmd == "srvr"
}
