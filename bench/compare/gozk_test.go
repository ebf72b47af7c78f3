package compare

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/load"
)

// The gozk client's end-to-end run needs a server that speaks the full
// handshake go-zookeeper sends (the fake servers require the read-only
// flag it omits); `corral bench compare --client gozk` shows it. These
// tests cover its loop and its checks.

func TestGozkLoopCountsOnlyTheMeasuredInterval(t *testing.T) {
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
}

func TestGozkLoopCountsErrors(t *testing.T) {
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
