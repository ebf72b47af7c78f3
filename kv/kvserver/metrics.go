package kvserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/apisrv"
	"github.com/corral-db/corral/zab"
)

// MetricsPath is where a member serves its Prometheus metrics.
const MetricsPath = "/metrics"

// requestMetrics count a member's API calls and time its reads and
// writes. Observing is one counter add and one summary observation per
// call.
type requestMetrics struct {
	requests          *prometheus.CounterVec // op, code
	readLat, writeLat prometheus.Summary
}

// latencyObjectives are the quantiles a latency summary keeps (as
// ZooKeeper's advanced summaries: median, 90th, 99th), over latencyWindow.
var latencyObjectives = map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}

const latencyWindow = time.Minute

func newRequestMetrics() *requestMetrics {
	sum := func(name, help string) prometheus.Summary {
		return prometheus.NewSummary(prometheus.SummaryOpts{Name: name, Help: help,
			Objectives: latencyObjectives, MaxAge: latencyWindow, AgeBuckets: 2})
	}
	return &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_kv_requests_total",
			Help: "KV API calls answered by this member, by method (op) and gRPC status code (code); each put of a MultiPut also counts as a Put with its own outcome's code",
		}, []string{"op", "code"}),
		readLat:  sum("corral_kv_read_latency_seconds", "Latency of the reads this member answered (Get, MultiGet, Scan, ListTables), confirmation round included"),
		writeLat: sum("corral_kv_write_latency_seconds", "Latency of the writes this member answered (Put, MultiPut, Delete, CheckAndPut, CheckAndDelete, CreateTable, DropTable), until applied here"),
	}
}

// opKind says whether an API method is a read or a write ("" for
// neither: no latency is observed).
func opKind(op string) string {
	switch op {
	case "Get", "MultiGet", "Scan", "ListTables":
		return "read"
	case "Put", "MultiPut", "Delete", "CheckAndPut", "CheckAndDelete", "CreateTable", "DropTable":
		return "write"
	}
	return ""
}

// interceptor counts and times every unary call.
func (m *requestMetrics) interceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	op := info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:]
	m.requests.WithLabelValues(op, status.Code(err).String()).Inc()
	if mp, ok := resp.(*kvpb.MultiPutResponse); ok && err == nil {
		for _, o := range mp.GetOutcomes() {
			m.requests.WithLabelValues("Put", codes.Code(o.GetCode()).String()).Inc()
		}
	}
	switch opKind(op) {
	case "read":
		m.readLat.Observe(time.Since(start).Seconds())
	case "write":
		m.writeLat.Observe(time.Since(start).Seconds())
	}
	return resp, err
}

func (m *requestMetrics) register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.requests), reg.Register(m.readLat), reg.Register(m.writeLat))
}

// Reasons of a leader change as one member sees it (roleMetrics).
const (
	reasonElected    = "elected"     // this member became the established leader
	reasonHandedOver = "handed_over" // it stopped leading after handing leadership over
	reasonLost       = "lost"        // it stopped leading otherwise (no quorum, a newer epoch)
	reasonFollowed   = "followed"    // it began following a leader, or another one
)

// Reasons of a leadership transfer this member started.
const (
	transferCompaction = "compaction" // the compaction-aware leader change
	transferPreferred  = "preferred"  // a fresh group's first leader handing to its preferred member
)

// roleMetrics count a replica's leader changes and the transfers it
// started. They are fed on the driver's loop (OnSoftState) and by the
// leader change's goroutine; counters only.
type roleMetrics struct {
	changes   *prometheus.CounterVec // reason
	transfers *prometheus.CounterVec // reason
	inPlace   prometheus.Counter
}

func newRoleMetrics() *roleMetrics {
	m := &roleMetrics{
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_kv_leader_changes_total",
			Help: "Leader changes this member took part in, by reason: elected (it became the established leader), " +
				"handed_over (it stopped leading after a transfer), lost (it stopped leading otherwise), followed (it began following a new leader)",
		}, []string{"reason"}),
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "corral_kv_leader_transfers_total",
			Help: "Leadership transfers this member started as leader, by reason: compaction (the compaction-aware leader change), preferred (a fresh group's hand-over)",
		}, []string{"reason"}),
		inPlace: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "corral_kv_compact_in_place_total",
			Help: "Turns of this member, as leader, to compacting in place rather than handing leadership over",
		}),
	}
	for _, r := range []string{reasonElected, reasonHandedOver, reasonLost, reasonFollowed} {
		m.changes.WithLabelValues(r)
	}
	for _, r := range []string{transferCompaction, transferPreferred} {
		m.transfers.WithLabelValues(r)
	}
	return m
}

func (m *roleMetrics) register(reg prometheus.Registerer) error {
	return errors.Join(reg.Register(m.changes), reg.Register(m.transfers), reg.Register(m.inPlace))
}

// noteRole counts the leader change from prev to cur, if it is one.
func (m *roleMetrics) noteRole(prev, cur zab.SoftState) {
	following := func(s zab.SoftState) bool { return s.State == zab.StateFollowing && s.Phase == zab.PhaseBroadcast }
	switch {
	case !prev.Established() && cur.Established():
		m.changes.WithLabelValues(reasonElected).Inc()
	case prev.Established() && !cur.Established():
		if prev.Transferee != 0 {
			m.changes.WithLabelValues(reasonHandedOver).Inc()
		} else {
			m.changes.WithLabelValues(reasonLost).Inc()
		}
	}
	if following(cur) && (!following(prev) || prev.Leader != cur.Leader || prev.Epoch != cur.Epoch) {
		m.changes.WithLabelValues(reasonFollowed).Inc()
	}
}

// noteEvent counts an act of the compaction-aware leader change.
func (m *roleMetrics) noteEvent(e LeaderChangeEvent) {
	if e.Err != nil {
		return
	}
	if e.Decision.To != 0 {
		m.transfers.WithLabelValues(transferCompaction).Inc()
	} else {
		m.inPlace.Inc()
	}
}

// stateCollector reads a replica's state at each scrape: its zab
// position and role, its confirmation rounds, and its store's
// temperature, compaction gate and pebble figures.
type stateCollector struct {
	rep *replicaRun
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descApplied    = desc("corral_kv_applied_zxid", "Zxid of the last entry this member applied to its store")
	descCommitted  = desc("corral_kv_committed_zxid", "Highest zxid this member knows committed")
	descDurable    = desc("corral_kv_durable_zxid", "Zxid the store's last own flush covers (the zab log is kept from there)")
	descEpoch      = desc("corral_kv_epoch", "Epoch of the leader this member leads or follows")
	descIsLeader   = desc("corral_kv_is_leader", "1 when this member is the established leader, else 0")
	descLeaderID   = desc("corral_kv_leader_id", "Id of the member this one leads or follows; 0 while none is known")
	descRounds     = desc("corral_kv_read_confirm_rounds_total", "Leadership confirmation rounds run for reads (ReadIndex)")
	descRoundReads = desc("corral_kv_read_confirmed_total", "Reads confirmed by those rounds; with the rounds, reads per round")

	descHeat        = desc("corral_kv_heat", "Temperature: max(L0 sublevels / L0 compaction threshold, compaction debt / 64 MiB); 1 means a compaction is due")
	descL0Sub       = desc("corral_kv_l0_sublevels", "L0 sublevels of the store's LSM")
	descDebt        = desc("corral_kv_compaction_debt_bytes", "pebble's estimate of the bytes to compact before the LSM is stable")
	descCompacting  = desc("corral_kv_compactions_running", "Data-rewriting compactions running")
	descNearStall   = desc("corral_kv_near_stall", "1 when L0 is within two sublevels of pebble's write stop")
	descGateHeld    = desc("corral_kv_compaction_gate_held", "1 while this member's compactions are held (it leads under a leader-change policy)")
	descWaiting     = desc("corral_kv_compaction_waiting", "1 while pebble has a compaction waiting to start")
	descGateHolds   = desc("corral_kv_compaction_gate_holds_total", "Turns of the compaction gate to held")
	descGateRel     = desc("corral_kv_compaction_gate_releases_total", "Turns of the compaction gate from held to released")
	descGateRefused = desc("corral_kv_compaction_gate_refused_total", "Compactions pebble asked to start and the held gate refused")
	descGateGranted = desc("corral_kv_compaction_gate_granted_total", "Compactions the gate let start")
	descFlushes     = desc("corral_kv_flushes_total", "Memtable flushes completed")
	descCompactions = desc("corral_kv_compactions_total", "Compactions completed")
	descStalls      = desc("corral_kv_write_stalls_total", "pebble write stalls: commits waiting for a memtable flush or for L0 to shrink")
	descStallSecs   = desc("corral_kv_write_stall_seconds_total", "Total length of pebble's write stalls")

	descLevelTables  = desc("corral_kv_pebble_level_tables", "sstables per LSM level", "level")
	descLevelBytes   = desc("corral_kv_pebble_level_bytes", "Bytes of sstables per LSM level", "level")
	descReadAmp      = desc("corral_kv_pebble_read_amplification", "Sorted runs a point read may consult (L0 sublevels and non-empty levels)")
	descMemBytes     = desc("corral_kv_pebble_memtable_bytes", "Bytes of memtables allocated, the mutable one and those waiting to flush")
	descMemTables    = desc("corral_kv_pebble_memtables", "Memtables allocated")
	descCacheBytes   = desc("corral_kv_pebble_block_cache_bytes", "Bytes in pebble's block cache")
	descCacheHits    = desc("corral_kv_pebble_block_cache_hits_total", "Block cache hits")
	descCacheMisses  = desc("corral_kv_pebble_block_cache_misses_total", "Block cache misses")
	descDiskBytes    = desc("corral_kv_pebble_disk_bytes", "Bytes of the store's files on disk")
	descTableIters   = desc("corral_kv_pebble_table_iterators", "sstable iterators open")
	descSnapshots    = desc("corral_kv_pebble_snapshots", "pebble snapshots open")
	descFlushedBytes = desc("corral_kv_pebble_flushed_bytes_total", "Bytes written by flushes")
	descCompactBytes = desc("corral_kv_pebble_compacted_bytes_total", "Bytes written by compactions")
	descRowHits      = desc("corral_kv_row_cache_hits_total", "Plain row reads the row cache answered")
	descRowMisses    = desc("corral_kv_row_cache_misses_total", "Plain row reads the row cache did not answer")
	descRowBytes     = desc("corral_kv_row_cache_bytes", "Bytes the row cache holds")
)

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descApplied, descCommitted, descDurable, descEpoch, descIsLeader, descLeaderID,
		descRounds, descRoundReads, descHeat, descL0Sub, descDebt, descCompacting, descNearStall, descGateHeld,
		descWaiting, descGateHolds, descGateRel, descGateRefused, descGateGranted, descFlushes, descCompactions, descStalls, descStallSecs,
		descLevelTables, descLevelBytes, descReadAmp, descMemBytes, descMemTables, descCacheBytes, descCacheHits,
		descCacheMisses, descDiskBytes, descTableIters, descSnapshots, descFlushedBytes, descCompactBytes, descRowHits, descRowMisses, descRowBytes} {
		ch <- d
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	r := c.rep
	st := r.d.Status()
	gauge(descApplied, float64(r.store.Applied()))
	gauge(descCommitted, float64(st.Commit))
	gauge(descDurable, float64(r.store.Durable()))
	gauge(descEpoch, float64(st.Epoch))
	gauge(descIsLeader, b2f(st.Established()))
	gauge(descLeaderID, float64(st.Leader))
	counter(descRounds, float64(r.group.rounds.Load()))
	counter(descRoundReads, float64(r.group.roundReads.Load()))

	sm, err := r.store.Metrics(r.cfg.LeaderChange.DebtThreshold)
	if err != nil {
		// Closing, or reopening after a snapshot install: the store's
		// figures are left out of this scrape.
		ch <- prometheus.NewInvalidMetric(descHeat, fmt.Errorf("kv store: %w", err))
		return
	}
	t := sm.Temperature
	gauge(descHeat, t.Heat)
	gauge(descL0Sub, float64(t.L0Sublevels))
	gauge(descDebt, float64(t.CompactionDebt))
	gauge(descCompacting, float64(t.Compacting))
	gauge(descNearStall, b2f(t.NearStall))
	gauge(descGateHeld, b2f(t.Held))
	gauge(descWaiting, b2f(t.Pending))
	counter(descGateHolds, float64(t.Holds))
	counter(descGateRel, float64(t.Releases))
	counter(descGateRefused, float64(t.HeldCompactions))
	counter(descGateGranted, float64(t.GrantedCompactions))
	counter(descFlushes, float64(t.Flushes))
	counter(descCompactions, float64(t.Compactions))
	counter(descStalls, float64(t.WriteStalls))
	counter(descStallSecs, t.WriteStallTime.Seconds())
	for i := range sm.LevelTables {
		l := strconv.Itoa(i)
		gauge(descLevelTables, float64(sm.LevelTables[i]), l)
		gauge(descLevelBytes, float64(sm.LevelBytes[i]), l)
	}
	gauge(descReadAmp, float64(sm.ReadAmp))
	gauge(descMemBytes, float64(sm.MemTableBytes))
	gauge(descMemTables, float64(sm.MemTables))
	gauge(descCacheBytes, float64(sm.BlockCacheBytes))
	counter(descCacheHits, float64(sm.BlockCacheHits))
	counter(descCacheMisses, float64(sm.BlockCacheMisses))
	gauge(descDiskBytes, float64(sm.DiskBytes))
	gauge(descTableIters, float64(sm.TableIters))
	gauge(descSnapshots, float64(sm.Snapshots))
	counter(descFlushedBytes, float64(sm.BytesFlushed))
	counter(descCompactBytes, float64(sm.BytesCompacted))
	counter(descRowHits, float64(sm.RowCacheHits))
	counter(descRowMisses, float64(sm.RowCacheMisses))
	gauge(descRowBytes, float64(sm.RowCacheBytes))
}

// newMetricsRegistry is one member's registry: its replica's state and
// role changes, its API calls, and with runtime the Go runtime's and the
// process's collectors.
func newMetricsRegistry(rep *replicaRun, req *requestMetrics, runtime bool) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	err := errors.Join(reg.Register(stateCollector{rep: rep}), rep.roles.register(reg), req.register(reg))
	if runtime {
		err = errors.Join(err, reg.Register(collectors.NewGoCollector()), reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})))
	}
	return reg, err
}

// serveMetrics serves reg on lis until ctx ends.
func serveMetrics(ctx context.Context, lis net.Listener, reg *prometheus.Registry) error {
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("kvserver: metrics endpoint: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	<-errc
	return nil
}

// openMetrics opens cfg's metrics listener, if it asks for one, and
// returns it, the member's registry, and the API server's options that
// feed the registry (the request interceptor). Without a listener it
// returns none and default options.
func openMetrics(cfg Config, rep *replicaRun) (net.Listener, *prometheus.Registry, apisrv.Options, error) {
	lis := cfg.MetricsListener
	if lis == nil && cfg.MetricsListen == "" {
		return nil, nil, apisrv.Options{}, nil
	}
	req := newRequestMetrics()
	reg, err := newMetricsRegistry(rep, req, cfg.MetricsRuntime)
	if err != nil {
		return nil, nil, apisrv.Options{}, fmt.Errorf("kvserver: metrics: %w", err)
	}
	if lis == nil {
		if lis, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			return nil, nil, apisrv.Options{}, fmt.Errorf("kvserver: metrics listener: %w", err)
		}
	}
	return lis, reg, apisrv.Options{UnaryInterceptors: []grpc.UnaryServerInterceptor{req.interceptor}}, nil
}
