package kvoutage

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/corral-db/corral/bench/kv"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/ycsb"
	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// OutageConfig is one run of `corral bench kv-outage` (the ACaZoo
// paper's Figs. 16-17): a sharded cluster, a read-only Zipf load, and
// Kills SIGKILLs of one RG's leader's node.
type OutageConfig struct {
	Records    int64
	Threads    int
	Groups     int // RGs; the paper has one
	Members    int // per RG (and storage node processes)
	Warmup     time.Duration
	After      time.Duration // load kept running after each kill
	Kills      int
	Settle     time.Duration // quiet time after a restart before the next trial
	LowFrac    float64       // the low-throughput window's threshold, of the pre-kill mean
	Durability string
	TickTimeMs int
	Seed       uint64
	OpTimeout  time.Duration
	// StartTimeout bounds the cluster's start and each restart's settling.
	StartTimeout time.Duration
	CorralBin    string
	WorkDir      string
	Keep         bool
	OutDir       string
	CommandLine  string
	Log          *slog.Logger
}

// Outage limits.
const (
	MaxKills = 50
	// maxOpsPerThread bounds one thread's recorded operations per trial.
	maxOpsPerThread = 1 << 20
)

// DefaultOutageConfig is the paper's setup sized for a small machine:
// one RG of three, 64 threads.
func DefaultOutageConfig() OutageConfig {
	return OutageConfig{
		Records: 10_000, Threads: 64, Groups: 1, Members: 3,
		Warmup: 5 * time.Second, After: 5 * time.Second, Kills: 3, Settle: 3 * time.Second,
		LowFrac: 0.1, Durability: "sync", TickTimeMs: 500, Seed: 1,
		OpTimeout: 2 * time.Second, StartTimeout: 60 * time.Second,
	}
}

// Fill checks c and fills its zero fields with the defaults.
func (c *OutageConfig) Fill() error {
	d := DefaultOutageConfig()
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	c.OpTimeout = cmp.Or(c.OpTimeout, d.OpTimeout)
	c.StartTimeout = cmp.Or(c.StartTimeout, d.StartTimeout)
	c.LowFrac = cmp.Or(c.LowFrac, d.LowFrac)
	c.TickTimeMs = cmp.Or(c.TickTimeMs, d.TickTimeMs)
	c.Durability = cmp.Or(c.Durability, d.Durability)
	if err := kv.CheckLoad(c.Records, c.Threads, c.Members, 3); err != nil {
		return err
	}
	switch {
	case c.Groups < 1 || c.Groups > kv.MaxGroups:
		return fmt.Errorf("groups must be in [1, %d]", kv.MaxGroups)
	case c.Kills < 1 || c.Kills > MaxKills:
		return fmt.Errorf("kills must be in [1, %d]", MaxKills)
	case c.Warmup <= 0 || c.Warmup > kv.MaxPhase || c.After <= 0 || c.After > kv.MaxPhase || c.Settle < 0 || c.Settle > kv.MaxPhase:
		return fmt.Errorf("warmup and after must be in (0, %v], settle in [0, %v]", kv.MaxPhase, kv.MaxPhase)
	case c.OpTimeout < 0 || c.OpTimeout > kv.MaxPhase || c.StartTimeout < 0 || c.StartTimeout > kv.MaxPhase:
		return fmt.Errorf("timeouts must be in (0, %v]", kv.MaxPhase)
	case c.LowFrac <= 0 || c.LowFrac >= 1:
		return errors.New("low fraction must be in (0, 1)")
	case c.TickTimeMs < 1 || c.TickTimeMs > 60000:
		return errors.New("tick time must be in [1, 60000] ms")
	}
	return kv.CheckDurability(c.Durability)
}

// outageRun is the state of one run: the cluster, its CM, the restarted
// nodes (which this process started and stops).
type outageRun struct {
	cfg      *OutageConfig
	s        *kv.System
	dir      string // the cluster's -dir
	conn     *client.Conn
	st       *cm.Store
	ring     *ring.Ring
	restarts []*launch.Server
	logs     []string       // where members log their role changes
	nodeOf   map[string]int // a node's API address -> its number N (its config is nodeN/node.json)
}

// RunOutage runs the experiment; the report holds what completed even
// when an error ends the run early.
func RunOutage(ctx context.Context, cfg OutageConfig) (*OutageReport, error) {
	if err := cfg.Fill(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	rep := &OutageReport{Config: cfg, Started: time.Now().UTC()}
	dir, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-kv-outage-", cfg.Keep, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer cleanup()
	if cfg.CorralBin == "" {
		if cfg.CorralBin, err = launch.BuildCorral(ctx, dir); err != nil {
			return rep, err
		}
	}
	kcfg := kv.Config{CorralBin: cfg.CorralBin, Members: cfg.Members, Durability: cfg.Durability,
		TickTimeMs: cfg.TickTimeMs, StartTimeout: cfg.StartTimeout, OpTimeout: cfg.OpTimeout,
		Threads: cfg.Threads, Records: cfg.Records, Seed: cfg.Seed, Log: cfg.Log, ClusterLogLevel: "info"}
	s, err := kv.LaunchCluster(ctx, &kcfg, cfg.Groups, dir)
	if err != nil {
		return rep, fmt.Errorf("bench: %w", err)
	}
	r := &outageRun{cfg: &cfg, s: s, dir: filepath.Join(dir, "cluster"), logs: []string{filepath.Join(dir, "cluster.log")}}
	defer r.stop()
	rep.Nodes = s.Info().Members
	r.nodeOf = map[string]int{}
	_, nodes := kv.ParseClusterLog(r.logs[0])
	for _, n := range nodes {
		r.nodeOf[n.API] = n.ID
	}
	cmConnect := parseCMLine(r.logs[0])
	if cmConnect == "" {
		return rep, errors.New("bench: no configuration manager line in the cluster's log")
	}
	if r.conn, err = client.Connect(ctx, strings.Split(cmConnect, ","), client.SessionTimeout(cm.SessionTimeout)); err != nil {
		return rep, fmt.Errorf("bench: configuration manager: %w", err)
	}
	if r.st, err = cm.NewStore(r.conn, cm.DefaultRoot); err != nil {
		return rep, err
	}
	if r.ring, err = r.st.Ring(ctx); err != nil {
		return rep, err
	}
	t0 := time.Now()
	if err := kv.LoadRecords(ctx, &kcfg, s.Client); err != nil {
		return rep, fmt.Errorf("bench: load: %w", err)
	}
	cfg.Log.Info("loaded", "records", cfg.Records, "took", time.Since(t0).Round(time.Millisecond))
	for k := 1; k <= cfg.Kills; k++ {
		tr, err := r.trial(ctx, k)
		if err != nil {
			return rep, fmt.Errorf("bench: kill %d: %w", k, err)
		}
		rep.Trials = append(rep.Trials, tr)
		cfg.Log.Info("kill done", "kill", k, "outage", tr.Outage, "election", tr.Election, "cm", tr.CM, "reconnect", tr.Reconnect)
	}
	return rep, nil
}

func (r *outageRun) stop() {
	if r.conn != nil {
		r.conn.Close()
	}
	r.s.Stop() // the restarted nodes too: they are members with a process here
}

// target is the RG whose leader each trial kills.
const targetRG ring.GroupID = 1

// opRec is one operation's end: its offset from the trial's start, its
// RG and its error class ("" for success).
type opRec struct {
	at  time.Duration
	rg  ring.GroupID
	err string
}

// trial waits for the leaders to settle, runs the load, kills the
// target RG's leader's node after the warm-up, keeps the load for After,
// and restarts the node.
func (r *outageRun) trial(ctx context.Context, k int) (OutageTrial, error) {
	cfg := r.cfg
	if err := r.settle(ctx); err != nil {
		return OutageTrial{}, err
	}
	lead, ok, err := r.st.Leader(ctx, targetRG)
	if err != nil || !ok {
		return OutageTrial{}, fmt.Errorf("leader of %v: recorded %v, %v", targetRG, ok, err)
	}
	victim := -1
	for i, m := range r.s.Members {
		if m.Addr == lead.Addr {
			victim = i
		}
	}
	if victim < 0 {
		return OutageTrial{}, fmt.Errorf("no node serves %s, %v's leader", lead.Addr, targetRG)
	}
	m := r.s.Members[victim]
	tr := OutageTrial{Kill: k, RG: uint64(targetRG), Leader: lead.ID, Epoch: lead.Epoch, PID: m.PID()}

	start := time.Now()
	killAt := cfg.Warmup
	end := killAt + cfg.After
	lctx, cancel := context.WithDeadline(ctx, start.Add(end+cfg.OpTimeout))
	defer cancel()
	recs := make([][]opRec, cfg.Threads)
	zipf := ycsb.NewKeyChooser(cfg.Records)
	var wg sync.WaitGroup
	for t := range cfg.Threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(cfg.Seed+uint64(k)*uint64(kv.MaxThreads)+uint64(t), 0x6f75))
			for len(recs[t]) < maxOpsPerThread && lctx.Err() == nil && time.Since(start) < end {
				key := ycsb.KeyName(zipf.Next(rnd))
				err := kv.DoOp(lctx, cfg.OpTimeout, r.s.Client, kv.OpRead, key, rnd)
				recs[t] = append(recs[t], opRec{at: time.Since(start), rg: r.ring.Owner([]byte(key)), err: errClass(err)})
			}
		}()
	}
	select {
	case <-lctx.Done():
	case <-time.After(time.Until(start.Add(killAt))):
	}
	killWall := time.Now()
	tr.KillAt = killWall.Sub(start)
	if err := m.Kill(); err != nil {
		cancel()
		wg.Wait()
		return tr, fmt.Errorf("SIGKILL pid %d: %w", m.PID(), err)
	}
	cfg.Log.Info("killed", "kill", k, "rg", uint64(targetRG), "leader", lead.ID, "pid", m.PID())
	// The first newer leader the CM records (a later hand-over may
	// replace it before the trial ends): polled every cmPoll.
	var first cmRecord
	wg.Add(1)
	go func() {
		defer wg.Done()
		first = r.firstRecord(lctx, lead.Epoch, start.Add(end))
	}()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return tr, err
	}
	r.measure(&tr, recs, first, killWall, end)
	return tr, r.restart(victim)
}

// measure fills tr from the operations and the election and CM records.
func (r *outageRun) measure(tr *OutageTrial, recs [][]opRec, rec cmRecord, killWall time.Time, end time.Duration) {
	cfg := r.cfg
	var all, target []time.Duration
	tr.Errors = map[string]int64{}
	others := map[ring.GroupID][]time.Duration{}
	for _, rs := range recs {
		for _, o := range rs {
			if o.err != "" {
				tr.Errors[o.err]++
				continue
			}
			all = append(all, o.at)
			if o.rg == targetRG {
				target = append(target, o.at)
			} else {
				others[o.rg] = append(others[o.rg], o.at)
			}
		}
	}
	slices.Sort(all)
	slices.Sort(target)
	tr.Ops = int64(len(all))
	tr.Series = Series(all, kv.SeriesBucket, end)
	first, n, mean := LowWindow(tr.Series, kv.SeriesBucket, kv.SeriesBucket, tr.KillAt, cfg.LowFrac)
	tr.PreKillMean = mean
	tr.LowFrom, tr.Low = time.Duration(first)*kv.SeriesBucket-tr.KillAt, time.Duration(n)*kv.SeriesBucket
	var firstOK time.Duration
	if g, ok := LongestGap(target, tr.KillAt); ok {
		tr.Outage, tr.OutageFrom = g.Len(), g.From-tr.KillAt
		firstOK = g.To - tr.KillAt
	} else {
		tr.Outage, tr.Unended = end-tr.KillAt, true
	}
	for _, d := range others {
		slices.Sort(d)
		if gp, ok := LongestGap(d, tr.KillAt); ok && gp.Len() > tr.OtherRGsGap {
			tr.OtherRGsGap = gp.Len()
		}
	}
	var elected, recorded time.Duration
	if at, _, ok := electedAt(r.logs, targetRG, killWall); ok {
		elected = at.Sub(killWall)
	}
	if rec.ok {
		recorded, tr.NewLeader, tr.NewEpoch = rec.mtime.Sub(killWall), rec.l.ID, rec.l.Epoch
	}
	// The split describes this kill's own outage: the reads resume on
	// the RG after its new leader took over, which is not always the end
	// of the longest gap (a stall seconds later, on a loaded machine,
	// can be longer). Nothing succeeds on the RG between the kill and
	// the election (only a leader serves), so the first success after
	// the election ends the kill's outage.
	if elected > 0 {
		if at, ok := FirstAfter(target, tr.KillAt+elected); ok {
			firstOK = at - tr.KillAt
		}
	}
	tr.Elected, tr.Recorded, tr.FirstOK = elected, recorded, firstOK
	sp := SplitOutage(elected, recorded, firstOK)
	tr.Election, tr.CM, tr.Reconnect = sp.Election, sp.CM, sp.Reconnect
}

// cmRecord is a leader record and its znode's mtime (the CM leader's
// clock when it applied the write, in ms).
type cmRecord struct {
	l     cm.Leader
	mtime time.Time
	ok    bool
}

// cmPoll is how often firstRecord reads the target RG's leader znode.
const cmPoll = 5 * time.Millisecond

// firstRecord polls the target RG's leader znode until it records an
// epoch above killed, ctx ends or until passes.
func (r *outageRun) firstRecord(ctx context.Context, killed uint64, until time.Time) cmRecord {
	path := cm.DefaultRoot + "/rgs/" + strconv.FormatUint(uint64(targetRG), 10) + "/leader"
	for time.Now().Before(until) && ctx.Err() == nil {
		if b, stat, err := r.conn.Get(ctx, path); err == nil {
			var rec struct {
				cm.Leader
			}
			if json.Unmarshal(b, &rec) == nil && rec.Epoch > killed {
				return cmRecord{l: rec.Leader, mtime: time.UnixMilli(stat.Mtime), ok: true}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(cmPoll):
		}
	}
	return cmRecord{}
}

// restart starts the killed node again (`corral kv node -config
// DIR/nodeN/node.json`), as a process this run stops.
func (r *outageRun) restart(i int) error {
	m := r.s.Members[i]
	n, ok := r.nodeOf[m.Addr]
	if !ok {
		return fmt.Errorf("no node number for %s", m.Addr)
	}
	logPath := filepath.Join(filepath.Dir(r.dir), fmt.Sprintf("node%d-restart%d.log", n, len(r.restarts)+1))
	srv, err := launch.Spawn(fmt.Sprintf("kv node %d", n),
		[]string{r.cfg.CorralBin, "kv", "node", "-config", filepath.Join(r.dir, fmt.Sprintf("node%d", n), "node.json"), "-log-level", "info"},
		r.dir, logPath, r.cfg.Log)
	if err != nil {
		return err
	}
	r.restarts = append(r.restarts, srv)
	r.logs = append(r.logs, logPath)
	m.Replace(srv, logPath)
	return nil
}

// settle waits until every RG's recorded leader has stayed the same for
// Settle (a restarted node catching up, the balancer moving a leader
// back), bounded by StartTimeout.
func (r *outageRun) settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.StartTimeout)
	defer cancel()
	var last string
	since := time.Now()
	for {
		st, err := r.st.Load(ctx)
		cur := ""
		if err == nil {
			for g := 1; g <= r.cfg.Groups; g++ {
				l, ok := st.LeaderOf(ring.GroupID(g))
				cur += fmt.Sprintf("%v:%v/%d ", ok, l.Addr, l.Epoch)
			}
		}
		if cur != last {
			last, since = cur, time.Now()
		}
		if err == nil && time.Since(since) >= r.cfg.Settle {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("leaders did not settle: %v", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// errClass is an operation error's class for the report: its gRPC code,
// or the context's error.
func errClass(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded"
	case errors.Is(err, context.Canceled):
		return "Canceled"
	}
	if c := status.Code(err); c != codes.Unknown {
		return c.String()
	}
	return "other"
}

// roleLine matches a member's role change as kvserver logs it at info:
// `time=T level=INFO msg="kv member role" rg=G state=leading leader=L epoch=E`.
var roleLine = regexp.MustCompile(`^time=(\S+) .*msg="kv member role".* rg=(\d+) .*state=leading .*epoch=(\d+)`)

// electedAt is the first time at or after since that a member of g
// logged becoming leader, and the epoch it logged, from the logs.
func electedAt(logs []string, g ring.GroupID, since time.Time) (at time.Time, epoch uint64, ok bool) {
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		t, e, found := scanElected(f, g, since.Truncate(time.Millisecond))
		f.Close()
		if found && (!ok || t.Before(at)) {
			at, epoch, ok = t, e, true
		}
	}
	return at, epoch, ok
}

func scanElected(rd io.Reader, g ring.GroupID, since time.Time) (time.Time, uint64, bool) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := roleLine.FindStringSubmatch(sc.Text())
		if m == nil || m[2] != strconv.FormatUint(uint64(g), 10) {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil || t.Before(since) {
			continue
		}
		e, _ := strconv.ParseUint(m[3], 10, 64)
		return t, e, true
	}
	return time.Time{}, 0, false
}

// parseCMLine reads `corral kv cluster`'s "configuration manager: ..."
// line.
func parseCMLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "configuration manager: "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
