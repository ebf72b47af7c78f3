package floor

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

// Config configures Run. Start from DefaultConfig; zero fields take its
// values.
type Config struct {
	// Dir is where the probe's log files go: the disk of the servers'
	// data directories. The system's temp dir if empty.
	Dir string
	// Members are the ensemble sizes to measure (each a sync probe with
	// that many concurrent logs).
	Members []int
	// SyncRounds is the number of records each member's log appends and
	// syncs, per ensemble size.
	SyncRounds int
	// RecordSize is the size of one log record.
	RecordSize int
	// Pings is the number of loopback round trips; PingSize the bytes each
	// way.
	Pings    int
	PingSize int
	// IdlePings is the number of idle round trips: each after a pause of
	// IdleGap (zero: DefaultIdleGap), to an echo started by IdlePeer
	// (InProcessEcho if nil; `corral bench` passes ProcessEcho of itself).
	IdlePings int
	IdleGap   time.Duration
	IdlePeer  EchoPeer
	// IdlePeerName says where IdlePeer's echo runs, for the report.
	IdlePeerName string
	Log          *slog.Logger
}

// Defaults: a few seconds on a disk with fdatasync in the 0.1-10 ms range.
const (
	DefaultSyncRounds = 200
	DefaultRecordSize = 4096
	DefaultPings      = 2000
	DefaultPingSize   = 64
	DefaultIdlePings  = 1000
	// DefaultIdleGap is about how long a member of a 3-member ensemble
	// waits between the messages of one sequential write.
	DefaultIdleGap = 200 * time.Microsecond
	// MaxIdleGap bounds IdleGap (the prober spins through it).
	MaxIdleGap = 10 * time.Millisecond
	// MaxRounds bounds SyncRounds and Pings.
	MaxRounds = 1_000_000
)

// DefaultConfig measures a standalone server and a 3-member ensemble.
func DefaultConfig() Config {
	return Config{
		Members: []int{1, 3}, SyncRounds: DefaultSyncRounds, RecordSize: DefaultRecordSize,
		Pings: DefaultPings, PingSize: DefaultPingSize,
		IdlePings: DefaultIdlePings, IdleGap: DefaultIdleGap,
	}
}

func (c *Config) fill() error {
	d := DefaultConfig()
	if len(c.Members) == 0 {
		c.Members = d.Members
	}
	c.SyncRounds = cmp.Or(c.SyncRounds, d.SyncRounds)
	c.RecordSize = cmp.Or(c.RecordSize, d.RecordSize)
	c.Pings = cmp.Or(c.Pings, d.Pings)
	c.PingSize = cmp.Or(c.PingSize, d.PingSize)
	c.IdlePings = cmp.Or(c.IdlePings, d.IdlePings)
	c.IdleGap = cmp.Or(c.IdleGap, d.IdleGap)
	if c.IdlePeer == nil {
		c.IdlePeer, c.IdlePeerName = InProcessEcho, "this process"
	}
	c.IdlePeerName = cmp.Or(c.IdlePeerName, "the caller's echo peer")
	if c.Dir == "" {
		c.Dir = os.TempDir()
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	for _, n := range c.Members {
		if n < 1 || n > 64 {
			return fmt.Errorf("bench: floor: members %d out of range [1, 64]", n)
		}
	}
	if c.SyncRounds < 1 || c.SyncRounds > MaxRounds || c.Pings < 1 || c.Pings > MaxRounds || c.IdlePings < 1 || c.IdlePings > MaxRounds {
		return fmt.Errorf("bench: floor: sync rounds and pings must be in [1, %d]", MaxRounds)
	}
	if c.IdleGap < 0 || c.IdleGap > MaxIdleGap {
		return fmt.Errorf("bench: floor: the idle round trips' pause must be in [0, %v]", MaxIdleGap)
	}
	if c.RecordSize < 1 || c.RecordSize > 1<<20 || c.PingSize < 1 || c.PingSize > 1<<20 {
		return fmt.Errorf("bench: floor: record and ping sizes must be in [1, %d]", 1<<20)
	}
	if int64(c.SyncRounds)*int64(c.RecordSize) > MaxLogBytes {
		return fmt.Errorf("bench: floor: sync rounds × record size must be at most %d bytes (each member's log is preallocated)", MaxLogBytes)
	}
	return nil
}

// RoundTrips is the number of loopback round trips on the path of one
// write to an ensemble of n members: the client's to its server, and for
// an ensemble (whose client compare connects to a follower) the request
// forwarded to the leader and the commit back (one round trip), and the
// proposal to a follower and its acknowledgement (another).
func RoundTrips(n int) int {
	if n <= 1 {
		return 1
	}
	return 3
}

// Result is the floor for one ensemble size.
type Result struct {
	Members int `json:"members"`
	// Quorum is how many members' syncs a round waited for.
	Quorum     int `json:"quorum"`
	RecordSize int `json:"record_bytes"`
	// Sync is the time from the start of a round of concurrent appends
	// and fdatasyncs until a quorum of them returned.
	Sync stats.Latency `json:"sync"`
	// RoundTrips is how many loopback round trips the write path needs.
	RoundTrips int `json:"round_trips"`
	// P50 and P99 are the floor in microseconds: Sync plus RoundTrips
	// loopback round trips, at each percentile (the p99 a sum of tails,
	// so an upper estimate of the floor's own p99).
	P50 float64 `json:"floor_p50_us"`
	P99 float64 `json:"floor_p99_us"`
	// IdleP50 and IdleP99 are the same with idle round trips in place of
	// the back-to-back ones: the floor when each hop wakes a process that
	// slept since its last message, as the members of a sequential write
	// do. Zero when not measured.
	IdleP50 float64 `json:"idle_floor_p50_us,omitempty"`
	IdleP99 float64 `json:"idle_floor_p99_us,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Start    time.Time     `json:"-"`
	Dir      string        `json:"-"`
	PingSize int           `json:"-"`
	Loopback stats.Latency `json:"-"`
	// Idle is the idle round trips' latency (Config.IdlePings after
	// IdleGap each, to IdlePeerName's echo).
	Idle         stats.Latency `json:"-"`
	IdleGap      time.Duration `json:"-"`
	IdlePeerName string        `json:"-"`
	Results      []Result      `json:"-"`
	Err          string        `json:"-"`
}

// Run measures the loopback round trip and, for each ensemble size, the
// concurrent syncs of one record. Its files in Dir are removed before it
// returns.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	rep := &Report{Start: time.Now(), Dir: cfg.Dir, PingSize: cfg.PingSize, IdleGap: cfg.IdleGap, IdlePeerName: cfg.IdlePeerName}
	cfg.Log.Info("floor: loopback round trips", "pings", cfg.Pings, "bytes", cfg.PingSize)
	ping, err := roundTrips(ctx, InProcessEcho, cfg.Pings, cfg.PingSize, 0)
	if err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	rep.Loopback = ping.Summary()
	cfg.Log.Info("floor: idle round trips", "pings", cfg.IdlePings, "gap", cfg.IdleGap, "echo", cfg.IdlePeerName)
	idle, err := roundTrips(ctx, cfg.IdlePeer, cfg.IdlePings, cfg.PingSize, cfg.IdleGap)
	if err != nil {
		rep.Err = err.Error()
		return rep, err
	}
	rep.Idle = idle.Summary()
	record := make([]byte, cfg.RecordSize)
	for i := range record {
		record[i] = byte(i*131 + 7)
	}
	for _, n := range cfg.Members {
		cfg.Log.Info("floor: concurrent syncs", "members", n, "rounds", cfg.SyncRounds, "bytes", cfg.RecordSize)
		h, _, err := syncProbe{dir: cfg.Dir, members: n, rounds: cfg.SyncRounds, record: record}.run(ctx)
		if err != nil {
			rep.Err = err.Error()
			return rep, err
		}
		rep.Results = append(rep.Results, newResult(n, cfg.RecordSize, h.Summary(), rep.Loopback, rep.Idle))
	}
	return rep, nil
}

func newResult(n, recordSize int, sync, loopback, idle stats.Latency) Result {
	k := RoundTrips(n)
	r := Result{
		Members: n, Quorum: Quorum(n), RecordSize: recordSize, Sync: sync, RoundTrips: k,
		P50: float64(sync.P50) + float64(k)*float64(loopback.P50),
		P99: float64(sync.P99) + float64(k)*float64(loopback.P99),
	}
	if idle.Count > 0 {
		r.IdleP50 = float64(sync.P50) + float64(k)*float64(idle.P50)
		r.IdleP99 = float64(sync.P99) + float64(k)*float64(idle.P99)
	}
	return r
}

// For returns the floor for n members, if measured.
func (r *Report) For(n int) (Result, bool) {
	if r == nil {
		return Result{}, false
	}
	i := slices.IndexFunc(r.Results, func(x Result) bool { return x.Members == n })
	if i < 0 {
		return Result{}, false
	}
	return r.Results[i], true
}

// Multiple is a latency in microseconds as a multiple of the floor's p50;
// false if the floor is not positive.
func (f Result) Multiple(us float64) (float64, bool) {
	if f.P50 <= 0 {
		return 0, false
	}
	return us / f.P50, true
}

// IdleMultiple is a latency in microseconds as a multiple of the floor's
// p50 with idle round trips; false if that was not measured.
func (f Result) IdleMultiple(us float64) (float64, bool) {
	if f.IdleP50 <= 0 {
		return 0, false
	}
	return us / f.IdleP50, true
}

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "## corral bench floor\n\n")
	fmt.Fprintf(w, "- started: %s\n", r.Start.UTC().Format(time.RFC3339))
	r.WriteSection(w)
}

// WriteSection writes the conditions and the table, without a title, for
// compare's report to embed.
func (r *Report) WriteSection(w io.Writer) {
	fmt.Fprintf(w, "- disk: the directory %s; loopback: one TCP connection on 127.0.0.1, %d bytes each way, Nagle off, "+
		"to an echo in this process, round trips back to back\n", r.Dir, r.PingSize)
	if r.Idle.Count > 0 {
		fmt.Fprintf(w, "- idle loopback: the same to an echo in %s, each round trip after a pause of %v, so that both ends "+
			"have slept since their last message as the members of a sequential write have: p50 %.3f ms, p99 %.3f ms\n",
			r.IdlePeerName, r.IdleGap, ms(r.Idle.P50), ms(r.Idle.P99))
	}
	fmt.Fprintf(w, "- sync: N files (one log per member, preallocated with zeros as a WAL segment is) each writing its next record "+
		"and fdatasyncing it, all N at once; a round lasts until a quorum (a majority of N) returned\n")
	fmt.Fprintf(w, "- floor = sync + round trips × loopback, at p50 and p99 (the p99 a sum of tails); "+
		"idle floor = the same with the idle loopback\n\n")
	fmt.Fprintf(w, "| members | quorum | record bytes | sync p50 ms | sync p99 ms | loopback p50 ms | loopback p99 ms | round trips | floor p50 ms | floor p99 ms | idle floor p50 ms | idle floor p99 ms |\n")
	fmt.Fprintf(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.Results {
		fmt.Fprintf(w, "| %d | %d | %d | %.3f | %.3f | %.3f | %.3f | %d | %.3f | %.3f | %.3f | %.3f |\n",
			x.Members, x.Quorum, x.RecordSize, ms(x.Sync.P50), ms(x.Sync.P99), ms(r.Loopback.P50), ms(r.Loopback.P99),
			x.RoundTrips, x.P50/1000, x.P99/1000, x.IdleP50/1000, x.IdleP99/1000)
	}
	if r.Err != "" {
		fmt.Fprintf(w, "\n- floor probe FAILED: %s\n", r.Err)
	}
}

func ms(us int64) float64 { return float64(us) / 1000 }

// jsonLine is one ensemble size's floor as a JSON line.
type jsonLine struct {
	Floor     bool          `json:"floor"`
	Start     string        `json:"start"`
	Loopback  stats.Latency `json:"loopback"`
	Idle      stats.Latency `json:"idle_loopback"`
	IdleGapUS float64       `json:"idle_gap_us"`
	PingSize  int           `json:"ping_bytes"`
	Result
}

// JSONLines writes one object per ensemble size.
func (r *Report) JSONLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, x := range r.Results {
		if err := enc.Encode(jsonLine{Floor: true, Start: r.Start.UTC().Format(time.RFC3339), Loopback: r.Loopback,
			Idle: r.Idle, IdleGapUS: float64(r.IdleGap) / float64(time.Microsecond), PingSize: r.PingSize, Result: x}); err != nil {
			return err
		}
	}
	return nil
}
