package paper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/client/recipes"
	"github.com/corral-db/corral/wire"
)

// Config configures Paper. Zero fields take DefaultConfig's.
type Config struct {
	Targets []string
	// Servers are Table 2's ensemble sizes; BarrierServers Table 3's.
	Servers        []int
	BarrierServers int
	// Workers are Table 2's worker counts, Creates each worker's creates,
	// ValueSize their data (the paper's 1 KB).
	Workers   []int
	Creates   int
	ValueSize int
	// Clients and Barriers are Table 3's axes. An empty axis skips its
	// table (Workers for Table 2, Clients for Table 3).
	Clients  []int
	Barriers []int
	// CellTimeout bounds each cell.
	CellTimeout    time.Duration
	SessionTimeout time.Duration
	// Command is the command line the report quotes.
	Command string

	Timing    launch.Timing
	WorkDir   string
	Keep      bool
	OutDir    string
	CorralBin string
	ZKLib     string
	Java      string
	JavaHeap  string
	Log       *slog.Logger
}

// Run defaults: scaled so that the whole run, both targets, takes a few
// minutes on two cores.
const (
	DefaultPaperCreates     = 1000
	DefaultPaperValueSize   = 1024
	DefaultPaperCellTimeout = 20 * time.Second
	maxPaperCreates         = 1_000_000
	maxPaperWorkers         = 200
	maxPaperClients         = 400
	maxPaperBarriers        = 10_000
)

// DefaultConfig is the default scaled-down run.
func DefaultConfig() Config {
	return Config{
		Targets: []string{launch.TargetCorral, launch.TargetZooKeeper}, Servers: []int{3, 5}, BarrierServers: 3,
		Workers: []int{1, 10, 20}, Creates: DefaultPaperCreates, ValueSize: DefaultPaperValueSize,
		Clients: []int{10, 20, 40}, Barriers: []int{20, 40},
		CellTimeout: DefaultPaperCellTimeout, SessionTimeout: bench.DefaultSessionTimeout,
		Timing: launch.DefaultTiming(), Java: "java", JavaHeap: launch.DefaultJavaHeap,
	}
}

func (c *Config) Validate() error {
	for _, t := range c.Targets {
		if t != launch.TargetCorral && t != launch.TargetZooKeeper {
			return fmt.Errorf("bench: unknown target %q (want %s or %s)", t, launch.TargetCorral, launch.TargetZooKeeper)
		}
	}
	inRange := func(name string, v []int, lo, hi int) error {
		for _, x := range v {
			if x < lo || x > hi {
				return fmt.Errorf("bench: %s must be in [%d, %d], not %d", name, lo, hi, x)
			}
		}
		return nil
	}
	return errors.Join(
		inRange("servers", c.Servers, 1, launch.MaxServers),
		inRange("barrier servers", []int{c.BarrierServers}, 1, launch.MaxServers),
		inRange("workers", c.Workers, 1, maxPaperWorkers),
		inRange("creates", []int{c.Creates}, 1, maxPaperCreates),
		inRange("value size", []int{c.ValueSize}, 0, 1<<20-1024),
		inRange("clients", c.Clients, 1, maxPaperClients),
		inRange("barriers", c.Barriers, 1, maxPaperBarriers),
	)
}

func (c *Config) fill() {
	d := DefaultConfig()
	if c.CellTimeout <= 0 || c.CellTimeout > launch.MaxPhase {
		c.CellTimeout = d.CellTimeout
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = d.SessionTimeout
	}
	if c.BarrierServers == 0 {
		c.BarrierServers = d.BarrierServers
	}
	c.Timing = c.Timing.OrDefault()
	if c.Java == "" {
		c.Java = d.Java
	}
	if c.JavaHeap == "" {
		c.JavaHeap = d.JavaHeap
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// paperRoot is the parent of Table 2's nodes.
const paperRoot = "/bench-paper"

// Run starts, per target, an ensemble of each size Table 2 or 3 needs
// (one ensemble serves both tables where sizes agree), runs the cells
// against it and stops it by PID. A failed ensemble or cell is reported
// and the run goes on; the returned error joins the failures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	work, cleanup, err := launch.WorkDir(cfg.WorkDir, "corral-bench-paper-", cfg.Keep, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := &Report{
		Start: time.Now(), Env: bench.NewEnv(), Command: cfg.Command, Creates: cfg.Creates,
		ValueSize: cfg.ValueSize, CellTimeout: cfg.CellTimeout,
	}
	rep.Env.WorkDir, rep.Env.Timing = work, cfg.Timing
	var sizes []int
	if len(cfg.Workers) > 0 {
		sizes = append(sizes, cfg.Servers...)
	}
	if len(cfg.Clients) > 0 && len(cfg.Barriers) > 0 {
		sizes = append(sizes, cfg.BarrierServers)
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	var errs []error
	for _, t := range cfg.Targets {
		for _, n := range sizes {
			if err := ctx.Err(); err != nil {
				rep.Err = err.Error()
				return rep, errors.Join(append(errs, err)...)
			}
			if err := paperEnsemble(ctx, cfg, rep, work, t, n); err != nil {
				errs = append(errs, fmt.Errorf("%s, %d servers: %w", t, n, err))
			}
		}
	}
	return rep, errors.Join(errs...)
}

// paperEnsemble runs every cell that needs target's ensemble of n servers.
func paperEnsemble(ctx context.Context, cfg Config, rep *Report, work, target string, n int) error {
	pe := PaperEnsemble{Target: target, Servers: n}
	lc := launch.LaunchConfig{
		Dir: filepath.Join(work, fmt.Sprintf("%s-%d", target, n)), Timing: cfg.Timing, ReadyTimeout: bench.WholeTimeout,
		CorralBin: cfg.CorralBin, Java: cfg.Java, JavaHeap: cfg.JavaHeap, ZKLib: cfg.ZKLib, Log: cfg.Log,
	}
	fail := func(err error) error {
		pe.Err = err.Error()
		rep.Ensembles = append(rep.Ensembles, pe)
		return err
	}
	if err := bench.PrepareLaunch(ctx, target, &lc, work); err != nil {
		return fail(err)
	}
	ens, err := launch.LaunchEnsemble(ctx, target, launch.EnsembleConfig{LaunchConfig: lc, Servers: n})
	if err != nil {
		return fail(err)
	}
	defer func() {
		ens.Stop()
		for _, m := range ens.Members {
			if cfg.OutDir != "" {
				base := fmt.Sprintf("%s-%d.s%d", target, n, m.ID)
				bench.CopyFile(m.LogPath, filepath.Join(cfg.OutDir, base+".log"))
				bench.CopyFile(m.ZooCfgPath, filepath.Join(cfg.OutDir, base+".zoo.cfg"))
			}
			if !cfg.Keep {
				os.RemoveAll(m.DataDir)
			}
		}
	}()
	leader, err := ens.WaitWhole(ctx, bench.WholeTimeout)
	if err != nil {
		return fail(err)
	}
	pe.Version, pe.Argv = ens.Version, ens.Members[0].Argv
	rep.Ensembles = append(rep.Ensembles, pe)
	// Sessions go round-robin over the members, followers first, as the
	// paper's clients spread over its servers.
	addrs := ens.ClientOrder(leader)
	var errs []error
	if slices.Contains(cfg.Servers, n) {
		for _, w := range cfg.Workers {
			cfg.Log.Info("table 2 cell", "target", target, "servers", n, "workers", w)
			c := runCreateCell(ctx, cfg, addrs, CreateCell{Target: target, Servers: n, Workers: w})
			rep.Creates2 = append(rep.Creates2, c)
			if c.Err != "" {
				errs = append(errs, fmt.Errorf("table 2, %d workers: %s", w, c.Err))
			}
		}
	}
	if n == cfg.BarrierServers {
		for _, b := range cfg.Barriers {
			for _, cl := range cfg.Clients {
				cfg.Log.Info("table 3 cell", "target", target, "servers", n, "clients", cl, "barriers", b)
				c := runBarrierCell(ctx, cfg, addrs, BarrierCell{Target: target, Servers: n, Clients: cl, Barriers: b})
				rep.Barriers3 = append(rep.Barriers3, c)
				if c.Err != "" {
					errs = append(errs, fmt.Errorf("table 3, %d clients, %d barriers: %s", cl, b, c.Err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// openSessions opens n sessions, the i-th on addrs[i%len(addrs)].
func openSessions(ctx context.Context, cfg Config, addrs []string, n int) ([]*client.Conn, error) {
	conns := make([]*client.Conn, 0, n)
	for i := range n {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		c, err := client.Connect(cctx, []string{addrs[i%len(addrs)]}, client.SessionTimeout(cfg.SessionTimeout))
		cancel()
		if err != nil {
			closeSessions(conns)
			return nil, fmt.Errorf("session %d: %w", i, err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closeSessions(conns []*client.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// runCreateCell measures Table 2's cell: cell.Workers sessions, each
// creating cfg.Creates nodes in turn and deleting each asynchronously.
func runCreateCell(ctx context.Context, cfg Config, addrs []string, cell CreateCell) CreateCell {
	workers := cell.Workers
	cell.Planned = workers * cfg.Creates
	conns, err := openSessions(ctx, cfg, addrs, workers)
	if err != nil {
		aggregateCreates(&cell, []createSample{{err: err}}, 0)
		return cell
	}
	defer closeSessions(conns)
	acl := client.WorldACL(client.PermAll)
	if _, err := conns[0].Create(ctx, paperRoot, nil, acl, client.ModePersistent); err != nil && !errors.Is(err, wire.CodeNodeExists) {
		aggregateCreates(&cell, []createSample{{err: err}}, 0)
		return cell
	}
	data := load.Value(cfg.ValueSize)
	cctx, cancel := context.WithTimeout(ctx, cfg.CellTimeout)
	defer cancel()
	samples := make([]createSample, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			samples[i] = createWorker(cctx, c, fmt.Sprintf("%s/w%d-%d-", paperRoot, workers, i), data, acl, cfg.Creates)
		}()
	}
	wg.Wait()
	aggregateCreates(&cell, samples, time.Since(start))
	return cell
}

// createWorker is the paper's worker: create, wait, delete asynchronously,
// repeat; n times or until ctx ends (which is not an error).
func createWorker(ctx context.Context, c *client.Conn, prefix string, data []byte, acl []client.ACL, n int) createSample {
	s := createSample{latencies: make([]time.Duration, 0, n)}
	var prev *client.Future[struct{}]
	checkPrev := func(wait bool) {
		if prev == nil {
			return
		}
		if wait {
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := prev.Wait(wctx)
			cancel()
			if err != nil {
				s.deleteErrors++
			}
			return
		}
		select {
		case <-prev.Done():
			if _, err := prev.Result(); err != nil {
				s.deleteErrors++
			}
		default:
			// Replies come in call order, so a delete sent before a
			// create that has been answered has been answered too; this
			// is not reached.
		}
	}
	for i := range n {
		t0 := time.Now()
		p, err := c.Create(ctx, fmt.Sprintf("%s%d", prefix, i), data, acl, client.ModePersistent)
		if err != nil {
			if ctx.Err() == nil {
				s.err = err
			}
			break
		}
		s.latencies = append(s.latencies, time.Since(t0))
		checkPrev(false)
		prev = c.DeleteAsync(p, -1)
	}
	checkPrev(true)
	return s
}

// runBarrierCell measures Table 3's cell: cell.Clients sessions each
// entering cell.Barriers double barriers in succession and then leaving
// them all.
func runBarrierCell(ctx context.Context, cfg Config, addrs []string, cell BarrierCell) BarrierCell {
	clients, barriers := cell.Clients, cell.Barriers
	conns, err := openSessions(ctx, cfg, addrs, clients)
	if err != nil {
		aggregateBarriers(&cell, nil, []error{err}, 0)
		return cell
	}
	defer closeSessions(conns)
	cctx, cancel := context.WithTimeout(ctx, cfg.CellTimeout)
	defer cancel()
	dir := fmt.Sprintf("/bench-paper-barrier-c%d-b%d", clients, barriers)
	finish := make([]time.Duration, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A client that fails cancels the cell: the others would
			// wait for it at the next barrier until the timeout.
			if err := barrierClient(cctx, c, dir, fmt.Sprint(i), clients, barriers); err != nil {
				errs[i] = err
				cancel()
				return
			}
			finish[i] = time.Since(start)
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		// One message, not every client's context error.
		errs = []error{fmt.Errorf("cell timeout %v", cfg.CellTimeout)}
	}
	aggregateBarriers(&cell, finish, errs, wall)
	return cell
}

func barrierClient(ctx context.Context, c *client.Conn, dir, name string, size, n int) error {
	bs := make([]*recipes.DoubleBarrier, n)
	for i := range bs {
		bs[i] = recipes.NewDoubleBarrier(c, fmt.Sprintf("%s-%d", dir, i), name, size)
		if err := bs[i].Enter(ctx); err != nil {
			return fmt.Errorf("enter %d: %w", i, err)
		}
	}
	for i, b := range bs {
		if err := b.Leave(ctx); err != nil {
			return fmt.Errorf("leave %d: %w", i, err)
		}
	}
	return nil
}
