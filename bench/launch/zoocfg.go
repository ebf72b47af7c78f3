package launch

import (
	"fmt"
	"strings"

	"github.com/corral-db/corral/config"
)

// DefaultGlobalOutstandingLimit is the globalOutstandingLimit written to the
// benchmark's zoo.cfg. ZooKeeper's default (1000) stops reading from client
// sockets once that many requests are queued, which 32 connections with 32
// in flight already exceed; the benchmark measures the servers, not that
// throttle, so the limit is set far above any window the harness uses.
const DefaultGlobalOutstandingLimit = 100000

// Timing is the quorum timing of zoo.cfg. Both targets get the same values,
// and reports state them: they bound how fast an ensemble notices a dead
// peer, and the session timeouts a server grants (2 to 20 ticks).
type Timing struct {
	// TickTimeMs is tickTime in milliseconds.
	TickTimeMs int `json:"tick_time_ms"`
	// InitLimit and SyncLimit are in ticks.
	InitLimit int `json:"init_limit"`
	SyncLimit int `json:"sync_limit"`
}

// DefaultTiming is ZooKeeper's sample configuration (conf/zoo_sample.cfg).
func DefaultTiming() Timing { return Timing{TickTimeMs: 2000, InitLimit: 10, SyncLimit: 5} }

// OrDefault fills zero fields from DefaultTiming.
func (t Timing) OrDefault() Timing {
	d := DefaultTiming()
	if t.TickTimeMs <= 0 {
		t.TickTimeMs = d.TickTimeMs
	}
	if t.InitLimit <= 0 {
		t.InitLimit = d.InitLimit
	}
	if t.SyncLimit <= 0 {
		t.SyncLimit = d.SyncLimit
	}
	return t
}

func (t Timing) String() string {
	return fmt.Sprintf("tickTime=%d, initLimit=%d, syncLimit=%d", t.TickTimeMs, t.InitLimit, t.SyncLimit)
}

// Peer is one server.N line of an ensemble on 127.0.0.1.
type Peer struct {
	ID           int
	QuorumPort   int
	ElectionPort int
	ClientPort   int
}

// Line is the value of the peer's server.N line.
func (p Peer) Line() string {
	return fmt.Sprintf("127.0.0.1:%d:%d;127.0.0.1:%d", p.QuorumPort, p.ElectionPort, p.ClientPort)
}

// ServerConfig is the one zoo.cfg both servers under test are started from.
type ServerConfig struct {
	DataDir string
	// Port is the client port of a standalone server; an ensemble's client
	// ports are on its server.N lines.
	Port int
	// GlobalOutstandingLimit; DefaultGlobalOutstandingLimit if 0.
	GlobalOutstandingLimit int
	// Timing; zero fields take DefaultTiming's.
	Timing Timing
	// Peers, if not empty, make this the configuration of one member of an
	// ensemble: a server.N line per peer; the member is told which one it
	// is by the myid file in DataDir.
	Peers []Peer
	// Durability; the zero value is forceSync=yes and no durability line.
	Durability Durability
	// Ops, if set, turns on the AdminServer (with corral's web console,
	// on by default with it) and the Prometheus endpoint on 127.0.0.1.
	Ops *OpsPorts
}

// OpsPorts are the ports of a corral+ops server's HTTP endpoints.
type OpsPorts struct {
	Admin, Metrics int
}

// Durability is how a server under test makes its writes durable: the
// forceSync and durability lines of its zoo.cfg. The zero value is what
// compare and failover measure: forceSync=yes, no durability line.
type Durability struct {
	// NoForceSync writes forceSync=no: both servers then write the log
	// without fsyncing it per write (corral: durability=async).
	NoForceSync bool
	// Mode, if not empty, adds durability=Mode (corral's key: sync, async
	// or diskless). ZooKeeper would take an unknown key for a system
	// property and ignore it, so it is only written for corral.
	Mode string
}

// Lines are the zoo.cfg lines d stands for.
func (d Durability) Lines() []string {
	l := []string{"forceSync=yes"}
	if d.NoForceSync {
		l[0] = "forceSync=no"
	}
	if d.Mode != "" {
		l = append(l, "durability="+d.Mode)
	}
	return l
}

// Config is the configuration c stands for: config.Default with a
// standalone server or an ensemble member on loopback with every write
// fsynced (forceSync=yes, unless Durability says otherwise), snapCount
// left at its default (100000), no connection limit, no admin server and
// all four-letter words. An ensemble member has no clientPort: its client
// address is on its server.N line (ZooKeeper rejects a clientPortAddress
// that differs from it, so stating it once is simplest).
func (c ServerConfig) Config() *config.Config {
	limit := c.GlobalOutstandingLimit
	if limit == 0 {
		limit = DefaultGlobalOutstandingLimit
	}
	t := c.Timing.OrDefault()
	z := config.Default()
	z.TickTime, z.InitLimit, z.SyncLimit = t.TickTimeMs, t.InitLimit, t.SyncLimit
	z.MinSessionTimeout, z.MaxSessionTimeout = 2*z.TickTime, 20*z.TickTime
	z.DataDir = c.DataDir
	if len(c.Peers) == 0 {
		z.ClientPort, z.ClientPortAddress = c.Port, "127.0.0.1"
	}
	z.MaxClientCnxns = 0
	z.ForceSync = !c.Durability.NoForceSync
	// No durability line unless asked for: ZooKeeper would take the key
	// for a system property and ignore it.
	z.Durability = config.Durability(c.Durability.Mode)
	z.GlobalOutstandingLimit = limit
	z.Admin.EnableServer = false
	if c.Ops != nil {
		z.Admin.EnableServer, z.Admin.ServerAddress, z.Admin.ServerPort = true, "127.0.0.1", c.Ops.Admin
		z.Metrics.ClassName, z.Metrics.HTTPHost, z.Metrics.HTTPPort = config.PrometheusMetricsProvider, "127.0.0.1", c.Ops.Metrics
	}
	z.FourLetterWordWhitelist = []string{"*"}
	for _, p := range c.Peers {
		z.Servers = append(z.Servers, config.Server{ID: int64(p.ID), Host: "127.0.0.1",
			QuorumPort: p.QuorumPort, ElectionPort: p.ElectionPort, ClientAddr: "127.0.0.1", ClientPort: p.ClientPort})
	}
	return z
}

// ZooCfg renders Config with config.WriteZooCfg, the writer every zoo.cfg
// of the project goes through.
func (c ServerConfig) ZooCfg() string {
	var b strings.Builder
	c.Config().WriteZooCfg(&b) // a strings.Builder does not fail
	return b.String()
}
