package server

import (
	"crypto/tls"
	"log/slog"
	"os"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/vfs"
)

// Durability selects when a transaction counts as logged.
type Durability int

const (
	// DurabilitySync fsyncs every group of transactions before replying.
	DurabilitySync Durability = iota
	// DurabilityAsync writes transactions to the OS before replying and
	// fsyncs them periodically.
	DurabilityAsync
	// DurabilityDiskless keeps no transaction log: busy snapshots while
	// writes flow, complete checkpoints when the server leaves broadcast
	// and at orderly shutdown (checkpoint.go, docs/design/diskless.md).
	DurabilityDiskless
)

// Options configures a Server. Zero values take ZooKeeper's defaults.
type Options struct {
	// ListenAddr is the client address, e.g. "127.0.0.1:2181"; "" for
	// none (then SecureListenAddr must be set).
	ListenAddr string
	// SecureListenAddr is the TLS client address (secureClientPort); ""
	// for none.
	SecureListenAddr string
	// PortUnification makes ListenAddr accept TLS clients too
	// (client.portUnification), told apart by their first byte, which
	// they must send within HandshakeDetectionTimeout (default 5 s).
	PortUnification           bool
	HandshakeDetectionTimeout time.Duration
	// TLS is the client ports' TLS configuration (ssl.*), required with
	// SecureListenAddr or PortUnification. Client certificates it
	// verifies give their connections x509:<subject> ids.
	TLS *tls.Config
	// X509SuperUser is X509AuthenticationProvider.superUser: the
	// certificate subject that is granted the super id.
	X509SuperUser string
	// DataDir holds snapshots; DataLogDir the transaction log (defaults to
	// DataDir). Both are created if missing.
	DataDir    string
	DataLogDir string

	ServerID int64
	TickTime time.Duration
	// MinSessionTimeout and MaxSessionTimeout default to 2 and 20 ticks.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxClientCnxns limits concurrent connections per client IP (0 = no
	// limit).
	MaxClientCnxns int
	// GlobalOutstandingLimit bounds the requests in the pipeline; readers
	// stop reading their sockets while it is reached.
	GlobalOutstandingLimit int
	// MaxBuffer is jute.maxbuffer: the largest frame accepted or sent.
	MaxBuffer int
	// MaxOutBuffer bounds the bytes queued for one connection; a client
	// that does not read is disconnected past it.
	MaxOutBuffer int

	SnapCount int
	// SnapBytes starts a snapshot once the log written since the last
	// holds between half and all of this many bytes (zoo.cfg's
	// snapSizeLimitInKb); 0 or less: none.
	SnapBytes       int64
	SnapRetainCount int
	PurgeInterval   time.Duration
	Durability      Durability
	// AsyncSyncInterval is how often async durability fsyncs.
	AsyncSyncInterval time.Duration
	// PreallocSize is the WAL segment preallocation (0: the wal default).
	PreallocSize int64

	// FourLetterWords is the 4lw whitelist; "*" allows all.
	FourLetterWords map[string]bool
	// RlogRoot, if set, makes every znode directly under it a log whose
	// large entries live in a data log (rlogdata.go; zoo.cfg rlog.root).
	// It needs an ensemble with a log (sync or async durability).
	RlogRoot string
	// RlogCoupled runs the logs' group commit coupled (zoo.cfg
	// rlog.groupCommit=coupled): the data log has no flusher, and a
	// group's sync syncs the data log and then the WAL as one step,
	// where by default (decoupled) a flusher syncs payloads as they are
	// written and the WAL's sync only waits for it.
	RlogCoupled bool
	// RlogSegmentSize is the data log's segment size (zoo.cfg
	// rlog.segmentSize; 0 is the data log's default, 64 MiB): space is
	// reclaimed a segment at a time, and a sparse segment is compacted
	// (rlogcompact.go).
	RlogSegmentSize int64
	// rlogLazySync makes the data log's flusher sync only when asked
	// (a waiter, or its in-flight bound): tests use it to see that the
	// commit path, not the flusher's schedule, makes payloads durable.
	rlogLazySync bool
	// ExtendedTypesEnabled allows TTL nodes.
	ExtendedTypesEnabled bool
	// AuditLog is the audit log's file (audit.enable; see audit.go); ""
	// disables it.
	AuditLog string
	// EnforceQuota refuses creates and setData that would pass a hard
	// quota limit and logs those passing a soft one (server/quota.go).
	EnforceQuota bool
	// SuperDigest is "super:<base64 sha1>"; authenticating as its user
	// grants the super id.
	SuperDigest string
	// ContainerCheckInterval is the container and TTL reaper period.
	ContainerCheckInterval time.Duration
	// ContainerMaxNeverUsed: empty containers that never had a child are
	// reaped after this long (0 = never).
	ContainerMaxNeverUsed time.Duration

	// ConfigLines are printed by the conf four-letter word.
	ConfigLines []flw.KV

	// Ensemble, if set, makes this server a member of a replicated
	// ensemble; nil runs it standalone.
	Ensemble *Ensemble

	// Metrics receives the server's counters and summaries (ZooKeeper's
	// ServerMetrics names); mntr prints them and the admin package's
	// Prometheus endpoint exports the same registry. nil: a registry of
	// the server's own.
	Metrics *metric.Registry

	Logger *slog.Logger
	FS     vfs.FS
	// Now is the wall clock (transaction times, session ids).
	Now func() time.Time
	// OnFatal is called when the server cannot go on (the log cannot be
	// written); it must not return. Default: exit the process with 1.
	OnFatal func(error)
}

// Ensemble describes the replicated ensemble a server belongs to: the
// server.N lines of zoo.cfg and its limits.
type Ensemble struct {
	// ID is this server's myid.
	ID uint64
	// Voters and Observers are the ids of the server.N lines.
	Voters    []uint64
	Observers []uint64
	// Peers are every server's quorum and election addresses.
	Peers map[uint64]transport.Peer
	// InitLimit and SyncLimit are in ticks (zoo.cfg's initLimit and
	// syncLimit).
	InitLimit int
	SyncLimit int
	// QuorumTLS, if set, secures member-to-member traffic (sslQuorum
	// with the ssl.quorum.* keys).
	QuorumTLS *transport.TLS
	// ForceRecover (corral server -force-recover) starts a diskless member
	// that would be recovering as a voter from its newest snapshot, the
	// way back after a crash of a majority (docs/design/diskless.md,
	// "Forced recovery"). It is recorded in dataDir/version-2/forced-recovery.
	ForceRecover bool
	// Config is what /zookeeper/config holds on this member (see
	// config.Config.QuorumConfig); nil leaves the node empty.
	Config []byte

	// Dynamic reconfiguration (reconfig.go). ReconfigEnabled is zoo.cfg's
	// reconfigEnabled: without it the reconfig operation answers
	// "reconfig disabled". Servers are the server.N lines (with their
	// addresses) of the configuration Config states, ConfigVersion its
	// version (the zxid of the reconfig that made it, 0 for a static
	// configuration). ConfigFile, if set, is the static zoo.cfg that a
	// committed reconfiguration rewrites to point at the new
	// zoo.cfg.dynamic.<version> (config.WriteDynamicConfig).
	// StandaloneEnabled is zoo.cfg's standaloneEnabled: a reconfiguration
	// must then leave at least two voters.
	ReconfigEnabled   bool
	Servers           []config.Server
	ConfigVersion     int64
	ConfigFile        string
	StandaloneEnabled bool
	// NextConfigVersion is the version of the zoo.cfg.dynamic.next found
	// at start-up beside ConfigFile (config.Config.NextConfigVersion), 0
	// for none: removed once a configuration that new is committed.
	NextConfigVersion int64
}

func (o *Options) setDefaults() {
	if o.TickTime <= 0 {
		o.TickTime = 3 * time.Second
	}
	if o.MinSessionTimeout <= 0 {
		o.MinSessionTimeout = 2 * o.TickTime
	}
	if o.MaxSessionTimeout <= 0 {
		o.MaxSessionTimeout = 20 * o.TickTime
	}
	if o.GlobalOutstandingLimit <= 0 {
		o.GlobalOutstandingLimit = 1000
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = 0xfffff
	}
	if o.MaxOutBuffer <= 0 {
		o.MaxOutBuffer = 64 << 20
	}
	if o.SnapCount <= 0 {
		o.SnapCount = 100000
	}
	if o.SnapRetainCount < 3 {
		o.SnapRetainCount = 3
	}
	if o.AsyncSyncInterval <= 0 {
		o.AsyncSyncInterval = time.Second
	}
	if o.ContainerCheckInterval <= 0 {
		o.ContainerCheckInterval = time.Minute
	}
	if o.DataLogDir == "" {
		o.DataLogDir = o.DataDir
	}
	if o.ServerID == 0 {
		o.ServerID = 1
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FS == nil {
		o.FS = vfs.OS()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Metrics == nil {
		o.Metrics = metric.NewRegistry(nil)
	}
	if o.OnFatal == nil {
		o.OnFatal = func(error) { os.Exit(1) }
	}
	if o.HandshakeDetectionTimeout <= 0 {
		o.HandshakeDetectionTimeout = 5 * time.Second
	}
	if o.FourLetterWords == nil {
		o.FourLetterWords = map[string]bool{"srvr": true}
	}
}
