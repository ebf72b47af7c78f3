package server

import (
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/zab"
)

// serverMetrics are the counters and summaries of ZooKeeper's
// ServerMetrics that corral has an equivalent of, under ZooKeeper's names
// and detail levels, plus corral's own (prefixed corral_). They live in
// Options.Metrics, which mntr and the Prometheus endpoint (admin) both
// read. Each is fed where the server already notices the event; nothing
// here takes a lock on the request path.
type serverMetrics struct {
	reg *metric.Registry

	readLatency, updateLatency *metric.Summary // per request, ms
	fsyncTime, snapshotTime    *metric.Summary // ms
	electionTime               *metric.Summary // LOOKING to following or leading, ms
	proposalLatency            *metric.Summary // leader: request received to committed, ms
	quorumAckLatency           *metric.Summary // leader: proposed to committed, ms
	commitCount, lookingCount  *metric.Counter
	restoreTime                *metric.Summary // the AdminServer's restore, ms

	// lookingSince is when this member last entered LOOKING (unix nanos);
	// 0 when it is not looking. Only the node loop writes it.
	lookingSince atomic.Int64
}

func newServerMetrics(reg *metric.Registry) *serverMetrics {
	adv, basic := metric.DetailAdvanced, metric.DetailBasic
	registerOwn(reg)
	return &serverMetrics{
		reg:              reg,
		readLatency:      reg.Summary("readlatency", "Read request latency in milliseconds", adv),
		updateLatency:    reg.Summary("updatelatency", "Update request latency in milliseconds", adv),
		fsyncTime:        reg.Summary("fsynctime", "Transaction log fsync time in milliseconds", basic),
		snapshotTime:     reg.Summary("snapshottime", "Snapshot write time in milliseconds", basic),
		electionTime:     reg.Summary("election_time", "Time from entering LOOKING to following or leading, in milliseconds", basic),
		proposalLatency:  reg.Summary("proposal_latency", "Leader: time from a write's arrival to its commit, in milliseconds", adv),
		quorumAckLatency: reg.Summary("quorum_ack_latency", "Leader: time from proposing a write to a quorum's acknowledgement, in milliseconds", adv),
		commitCount:      reg.Counter("commit_count", "Leader: proposals committed"),
		lookingCount:     reg.Counter("looking_count", "Times this server entered LOOKING (leader election)"),
		restoreTime:      reg.Summary("restore_time", "Time to restore the tree from a snapshot stream (AdminServer restore), in milliseconds", basic),
	}
}

// registerOwn registers corral's own metrics, which the storage feeds.
func registerOwn(reg *metric.Registry) {
	reg.Summary(metricCheckpointTime, "Diskless checkpoint write time in milliseconds", metric.DetailBasic)
	reg.Summary(metricCheckpointBytes, "Bytes of proposals a diskless checkpoint wrote beside its snapshot", metric.DetailBasic)
	reg.CounterSet(metricSnapshots, snapshotsHelp, "kind", snapBusy, snapIdle, snapCheckpoint)
}

// Metrics is the registry this server feeds (Options.Metrics).
func (s *Server) Metrics() *metric.Registry { return s.met.reg }

// Gauges are mntr's figures that are not in the registry: the gauges
// ZooKeeper registers (znode_count, watch_count, num_alive_connections,
// avg_latency, ...; a leader's learners and synced_followers) under its
// names, after the version and server_state strings. The admin package
// exports them to Prometheus; they are gathered as mntr gathers them.
func (s *Server) Gauges() []flw.Metric {
	return s.metrics(s.flwState(nil, "cons"))
}

// DurabilityMode names the server's durability: sync, async or diskless.
func (s *Server) DurabilityMode() string {
	switch s.opts.Durability {
	case DurabilityAsync:
		return "async"
	case DurabilityDiskless:
		return "diskless"
	}
	return "sync"
}

// recordLatency ends a request's measurement: srvr's and cons's figures
// and ZooKeeper's readlatency or updatelatency (ServerStats.updateLatency:
// requests with a transaction header are updates).
func (s *Server) recordLatency(c *conn, r *request, zxid int64) {
	lat := time.Since(r.recv)
	s.stats.record(lat)
	c.stats.record(opMnemonic(r.op), r.xid, zxid, lat, time.Since(s.started).Milliseconds())
	if r.kind == kindWrite {
		s.met.updateLatency.ObserveDuration(lat)
	} else {
		s.met.readLatency.ObserveDuration(lat)
	}
}

// zabState counts elections: entering LOOKING is looking_count, leaving it
// for a leader's broadcast ends election_time (ZooKeeper measures from
// LOOKING to the end of leader election; corral to the end of
// synchronization, when the member can serve).
func (m *serverMetrics) zabState(ss zab.SoftState) {
	now := time.Now().UnixNano()
	if ss.State == zab.StateLooking {
		if m.lookingSince.Load() == 0 {
			m.lookingSince.Store(now)
			m.lookingCount.Inc()
		}
		return
	}
	if ss.Phase != zab.PhaseBroadcast {
		return
	}
	if since := m.lookingSince.Swap(0); since != 0 {
		m.electionTime.ObserveDuration(time.Duration(now - since))
	}
}

// startLooking counts the LOOKING an ensemble member starts in, which its
// first zab state may already have left behind.
func (m *serverMetrics) startLooking() {
	m.lookingSince.Store(time.Now().UnixNano())
	m.lookingCount.Inc()
}

// committed is called on the leader for each of its proposals a quorum
// acknowledged.
func (m *serverMetrics) committed(r *request) {
	now := time.Now()
	m.commitCount.Inc()
	if !r.recv.IsZero() {
		m.proposalLatency.ObserveDuration(now.Sub(r.recv))
	}
	if !r.proposed.IsZero() {
		m.quorumAckLatency.ObserveDuration(now.Sub(r.proposed))
	}
}

// Names of corral's own metrics that the storage feeds through
// Options.Metrics (it has no serverMetrics of its own).
const (
	metricCheckpointTime  = "corral_checkpoint_time"
	metricCheckpointBytes = "corral_checkpoint_size_bytes"
	// metricSnapshots counts the snapshots written, by kind (the label
	// "kind"): snapBusy when writes arrived or snapCount was reached,
	// snapIdle in a diskless lull after writes, snapCheckpoint the
	// complete snapshot a diskless checkpoint writes when no newer
	// snapshot can carry its sidecar. One family with a label rather than
	// a name per kind, as Prometheus's conventions ask; ZooKeeper's own
	// names (snapshottime, ...) are unchanged.
	metricSnapshots = "corral_snapshots_total"
	snapshotsHelp   = "Snapshots written, by kind: busy (writes arrived or snapCount reached), " +
		"idle (a diskless lull after writes), checkpoint (a diskless checkpoint's complete snapshot)"
	snapBusy       = "busy"
	snapIdle       = "idle"
	snapCheckpoint = "checkpoint"
)

// snapshotTaken times a snapshot (snapshottime) and counts it as kind
// (busy, idle); "" leaves the count to the caller (the driver counts
// its own snapshots through OnSnapshot).
func (st *storage) snapshotTaken(took time.Duration, kind string) {
	st.snapTimes.add(took)
	if kind != "" {
		st.countSnapshot(kind)
	}
}

// countSnapshot counts one snapshot written, of kind.
func (st *storage) countSnapshot(kind string) {
	if st.opts.Metrics == nil {
		return
	}
	st.opts.Metrics.CounterSet(metricSnapshots, snapshotsHelp, "kind").With(kind).Inc()
}

// checkpointWritten times a diskless checkpoint.
func (st *storage) checkpointWritten(start time.Time) {
	if st.opts.Metrics == nil {
		return
	}
	st.opts.Metrics.Summary(metricCheckpointTime, "", metric.DetailBasic).ObserveDuration(time.Since(start))
}

// sidecarWritten records the bytes of proposals a checkpoint wrote beside
// its snapshot.
func (st *storage) sidecarWritten(ents []zab.Entry) {
	if st.opts.Metrics == nil {
		return
	}
	var n int64
	for i := range ents {
		n += int64(len(ents[i].Data))
	}
	st.opts.Metrics.Summary(metricCheckpointBytes, "", metric.DetailBasic).Observe(n)
}

// mntrLines are the registry's counters and summaries as ZooKeeper's
// DefaultMetricsProvider prints them in mntr: a counter as one line, a
// summary as avg_, min_, max_, cnt_, sum_ and, when advanced, p50_, p95_,
// p99_ and p999_.
func mntrLines(reg *metric.Registry) []flw.Metric {
	var out []flw.Metric
	for _, c := range reg.Counters() {
		out = append(out, flw.Metric{Name: c.Name(), Value: c.Load()})
	}
	for _, set := range reg.CounterSets() {
		set.Each(func(_ string, c *metric.Counter) {
			out = append(out, flw.Metric{Name: c.Name(), Value: c.Load()})
		})
	}
	for _, s := range reg.Summaries() {
		sn := s.Snapshot()
		out = append(out, flw.Summary(s.Name(), sn.Count, sn.Sum, sn.Min, sn.Max)...)
		if s.Detail() == metric.DetailAdvanced {
			out = append(out, flw.Percentiles(s.Name(), sn.Quantile(0.5), sn.Quantile(0.95), sn.Quantile(0.99), sn.Quantile(0.999))...)
		}
	}
	return out
}

// msSummary is the storage's view of one of the registry's summaries
// (fsynctime, snapshottime), bound by New; before that (recovery) it
// records nothing.
type msSummary struct{ s *metric.Summary }

func (t *msSummary) add(d time.Duration) {
	if t.s != nil {
		t.s.ObserveDuration(d)
	}
}

// get returns count, sum, min and max (all 0 before the first event).
func (t *msSummary) get() (count, sum, lo, hi int64) {
	if t.s == nil {
		return 0, 0, 0, 0
	}
	sn := t.s.Snapshot()
	return sn.Count, sn.Sum, sn.Min, sn.Max
}
