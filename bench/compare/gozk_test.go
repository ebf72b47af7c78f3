package compare

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/server"
)

// The gozk client needs a server that takes the handshake go-zookeeper
// sends (the fake servers require the read-only flag it omits), so its
// end-to-end test runs corral in this process.

// The loop runs in a synctest bubble: its clock is the fake one, so the
// warm-up and the measured interval hold the calls they should however
// slowly the machine schedules the test.
func TestGozkLoopCountsOnlyTheMeasuredInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		op := func() (bool, error) {
			calls++
			time.Sleep(100 * time.Microsecond)
			return true, nil
		}
		now := time.Now()
		// Everything before start is warm-up: created but not counted.
		tally := gozkLoop(context.Background(), op, now.Add(20*time.Millisecond), now.Add(60*time.Millisecond))
		if tally.created != int64(calls) {
			t.Errorf("created %d of %d calls", tally.created, calls)
		}
		if tally.ops == 0 || tally.ops >= tally.created {
			t.Errorf("ops %d, created %d: want the warm-up's creates left out", tally.ops, tally.created)
		}
		if tally.hist.Count() != tally.ops || tally.errs != 0 {
			t.Errorf("hist %d, ops %d, errs %d", tally.hist.Count(), tally.ops, tally.errs)
		}
	})
}

func TestGozkLoopCountsErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		op := func() (bool, error) {
			calls++
			if calls%2 == 0 {
				return false, errors.New("zk: node already exists")
			}
			return true, nil
		}
		now := time.Now()
		tally := gozkLoop(context.Background(), op, now, now.Add(30*time.Millisecond))
		if tally.errs == 0 || tally.firstErr != "zk: node already exists" {
			t.Errorf("errs %d first %q", tally.errs, tally.firstErr)
		}
		// The last call may have returned after the end, uncounted.
		if n := tally.ops + tally.errs; tally.created < tally.ops || n > int64(calls) || n < int64(calls)-1 {
			t.Errorf("created %d ops %d errs %d calls %d", tally.created, tally.ops, tally.errs, calls)
		}
	})
}

func TestGozkLoopStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tally := gozkLoop(ctx, func() (bool, error) { t.Error("called after cancel"); return false, nil }, time.Now(), time.Now().Add(time.Hour))
	if tally.ops != 0 {
		t.Errorf("ops %d", tally.ops)
	}
}

func TestCheckGozkPhase(t *testing.T) {
	ok := load.PhaseConfig{Addrs: []string{"127.0.0.1:1"}, Workload: load.WorkloadCreate, Conns: 1, Inflight: 2, Duration: time.Second}
	pc := ok
	if err := checkGozkPhase(&pc); err != nil {
		t.Fatal(err)
	}
	if pc.Root != load.DefaultRoot || !strings.HasSuffix(pc.Prefix, "-gozk") || pc.Phase != "create" {
		t.Errorf("filled %+v", pc)
	}
	for name, edit := range map[string]func(*load.PhaseConfig){
		"no address":  func(p *load.PhaseConfig) { p.Addrs = nil },
		"no inflight": func(p *load.PhaseConfig) { p.Inflight = 0 },
		"open loop":   func(p *load.PhaseConfig) { p.Rate = 10 },
		"max ops":     func(p *load.PhaseConfig) { p.MaxOps = 10 },
		"get no keys": func(p *load.PhaseConfig) { p.Workload = load.WorkloadGet },
		"bad value":   func(p *load.PhaseConfig) { p.ValueSize = -1 },
		"no duration": func(p *load.PhaseConfig) { p.Duration = 0 },
	} {
		pc := ok
		edit(&pc)
		if err := checkGozkPhase(&pc); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// startCorral runs a corral server in this process on a loopback port (the
// fake servers cannot take go-zookeeper's handshake) and returns its
// address.
func startCorral(t *testing.T) string {
	t.Helper()
	s, err := server.New(server.Options{
		ListenAddr: "127.0.0.1:0", DataDir: t.TempDir(), TickTime: 200 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s.Addr().String()
}

func TestGozkPhasesAgainstCorral(t *testing.T) {
	addr := startCorral(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := load.PhaseConfig{Target: "corral", Addrs: []string{addr}, Conns: 2, Inflight: 3, ValueSize: 16,
		Duration: 200 * time.Millisecond, ServerPID: os.Getpid()}
	pc := base
	pc.Workload = load.WorkloadCreate
	created, err := runGozkPhaseWithOps(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	if created.Ops == 0 || created.Errors != 0 || created.Latency.Count != created.Ops || created.ServerCPU == nil {
		t.Fatalf("create: %+v", created)
	}
	if created.Keys == nil || len(created.Keys.Counts) != 6 || created.Keys.Total() < created.Ops {
		t.Fatalf("create's key space %+v for %d ops: want a creator per goroutine (2 × 3)", created.Keys, created.Ops)
	}
	for _, w := range []load.Workload{load.WorkloadSet, load.WorkloadGet} {
		pc := base
		pc.Workload, pc.Keys = w, created.Keys
		r, err := runGozkPhaseWithOps(ctx, pc)
		if err != nil {
			t.Fatal(err)
		}
		// Every node the create phase counted exists: no NoNode errors.
		if r.Ops == 0 || r.Errors != 0 || r.Phase != string(w) {
			t.Errorf("%s: %+v (first error %s)", w, r, r.FirstError)
		}
	}
	// A node that exists already is an error reply, counted and named.
	pc = base
	pc.Workload, pc.Prefix = load.WorkloadSeqCreate, strings.TrimSuffix(created.Keys.Prefix, "-gozk")
	pc.Conns, pc.Inflight = 1, 1
	r, err := runGozkPhaseWithOps(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors == 0 || !strings.Contains(r.FirstError, "exists") {
		t.Errorf("recreating existing nodes: %d errors in %d ops, first %q", r.Errors, r.Ops, r.FirstError)
	}
}

// runGozkPhaseWithOps runs the phase again until a request completed or
// failed: on a loaded machine a 200 ms phase can end before its sessions
// are up.
func runGozkPhaseWithOps(ctx context.Context, pc load.PhaseConfig) (load.PhaseResult, error) {
	for {
		r, err := runGozkPhase(ctx, pc)
		if err != nil || r.Ops+r.Errors > 0 || ctx.Err() != nil {
			return r, err
		}
	}
}
