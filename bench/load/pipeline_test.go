package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/fakezk"
	"github.com/corral-db/corral/wire"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// budgetPhase is a phase bounded by count: no warm-up and a duration far
// longer than the work, so every reply is measured.
func budgetPhase(s *fakezk.Server, w Workload, conns, inflight int, ops int64) PhaseConfig {
	return PhaseConfig{
		Target: "fake", Addrs: []string{s.Addr()}, Workload: w,
		Conns: conns, Inflight: inflight, ValueSize: 1024,
		Duration: time.Minute, MaxOps: ops, Prefix: "k",
	}
}

func TestPhasesAgainstInOrderServer(t *testing.T) {
	ctx := testCtx(t)
	s := fakezk.NewServer(t, fakezk.InOrder, 0)

	cr, err := RunPhase(ctx, budgetPhase(s, WorkloadCreate, 4, 16, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if cr.Ops != 1000 || cr.Errors != 0 || cr.Latency.Count != 1000 {
		t.Errorf("create: ops %d errors %d latencies %d, want 1000, 0, 1000", cr.Ops, cr.Errors, cr.Latency.Count)
	}
	if got := s.Count(wire.OpCreate); got != 1000+1 { // + the root
		t.Errorf("server saw %d creates, want 1001", got)
	}
	if cr.Keys == nil || cr.Keys.Total() != 1000 || len(cr.Keys.Counts) != 4 {
		t.Fatalf("key space %+v, want 1000 nodes over 4 creators", cr.Keys)
	}
	for k, c := range cr.Keys.Counts {
		for i := range c {
			if p := cr.Keys.Path(k, i); s.Nodes[p] == nil {
				t.Fatalf("key space names %s, which the server does not have", p)
			}
		}
	}

	// More connections than creators, so some share a creator's nodes.
	for _, w := range []Workload{WorkloadSet, WorkloadGet} {
		cfg := budgetPhase(s, w, 6, 8, 700)
		cfg.Keys = cr.Keys
		r, err := RunPhase(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ops != 700 || r.Errors != 0 {
			t.Errorf("%s: ops %d errors %d, want 700, 0", w, r.Ops, r.Errors)
		}
	}
	if got := s.Count(wire.OpSetData); got != 700 {
		t.Errorf("server saw %d setData, want 700", got)
	}
	if got := s.Count(wire.OpGetData); got != 700 {
		t.Errorf("server saw %d getData, want 700", got)
	}
	if got := s.Count(wire.OpCloseSession); got != 4+6+6 {
		t.Errorf("server saw %d closeSession, want one per session (16)", got)
	}
	s.Check()
}

// Pipelined connections and sequential ones (one request in flight, one
// goroutine: sequential.go) count error replies alike.
func TestErrorRepliesAreCounted(t *testing.T) {
	for _, inflight := range []int{4, 1} {
		t.Run(fmt.Sprintf("inflight=%d", inflight), func(t *testing.T) {
			testErrorRepliesAreCounted(t, inflight)
		})
	}
}

func testErrorRepliesAreCounted(t *testing.T, inflight int) {
	ctx := testCtx(t)
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	s.FailCreate = fakezk.FailEveryTenth
	r, err := RunPhase(ctx, budgetPhase(s, WorkloadCreate, 3, inflight, 500))
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, c := range r.Keys.Counts {
		want += c / 10 // indices 9, 19, ... below c
	}
	if r.Errors != want || r.Ops != 500-want {
		t.Errorf("ops %d errors %d, want %d, %d", r.Ops, r.Errors, 500-want, want)
	}
	if r.Latency.Count != r.Ops {
		t.Errorf("%d latencies for %d successful ops", r.Latency.Count, r.Ops)
	}
	if want > 0 && r.FirstError == "" {
		t.Error("first error code not reported")
	}
	if got := s.Count(wire.OpCloseSession); got != 3 {
		t.Errorf("server saw %d closeSession, want one per session (3)", got)
	}
	s.Check()
}

// The hold server answers only once a connection has a full window
// outstanding, and complains if the client then sends more.
func TestPipelineFillsButNeverOverrunsWindow(t *testing.T) {
	ctx := testCtx(t)
	const window = 8
	s := fakezk.NewServer(t, fakezk.Hold, window)
	r, err := RunPhase(ctx, budgetPhase(s, WorkloadCreate, 2, window, 20*window))
	if err != nil {
		t.Fatal(err)
	}
	if r.Ops != 20*window {
		t.Errorf("ops %d, want %d", r.Ops, 20*window)
	}
	s.Check()
}

func TestSequentialClientHasOneInFlight(t *testing.T) {
	ctx := testCtx(t)
	s := fakezk.NewServer(t, fakezk.Hold, 1)
	cfg := budgetPhase(s, WorkloadSeqCreate, 1, 1, 20)
	r, err := RunPhase(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ops != 20 || r.Phase != "seqcreate" {
		t.Errorf("ops %d phase %q, want 20 seqcreate", r.Ops, r.Phase)
	}
	s.Check()
}

func TestOutOfOrderReplyIsAnError(t *testing.T) {
	ctx := testCtx(t)
	s := fakezk.NewServer(t, fakezk.Swap, 0)
	_, err := RunPhase(ctx, budgetPhase(s, WorkloadCreate, 1, 4, 100))
	if !errors.Is(err, ErrXidMismatch) {
		t.Fatalf("err = %v, want ErrXidMismatch", err)
	}
}

// The ping gate server answers nothing until it is pinged: the phase ends
// only if an idle connection pings.
func TestIdleConnectionPings(t *testing.T) {
	ctx := testCtx(t)
	s := fakezk.NewServer(t, fakezk.PingGate, 0)
	s.Timeout = 300 // ms: ping every 100ms
	r, err := RunPhase(ctx, budgetPhase(s, WorkloadCreate, 1, 4, 12))
	if err != nil {
		t.Fatal(err)
	}
	if r.Ops != 12 {
		t.Errorf("ops %d, want 12", r.Ops)
	}
	if got := s.Count(wire.OpPing); got == 0 {
		t.Error("no ping sent")
	}
	s.Check()
}

func TestSilentServerEndsThePhase(t *testing.T) {
	for _, inflight := range []int{4, 1} {
		t.Run(fmt.Sprintf("inflight=%d", inflight), func(t *testing.T) {
			s := fakezk.NewServer(t, fakezk.Silent, 0)
			cfg := budgetPhase(s, WorkloadCreate, 2, inflight, 0)
			cfg.Duration, cfg.DrainTimeout = 100*time.Millisecond, 200*time.Millisecond
			cfg.Prefix = ""
			_, err := RunPhase(testCtx(t), cfg)
			if !errors.Is(err, ErrStalled) {
				t.Fatalf("err = %v, want ErrStalled", err)
			}
		})
	}
}

func TestSetWithoutKeysIsRefused(t *testing.T) {
	_, err := RunPhase(testCtx(t), PhaseConfig{Addrs: []string{"127.0.0.1:1"}, Workload: WorkloadSet,
		Conns: 1, Inflight: 1, Duration: time.Second})
	if err == nil {
		t.Fatal("set phase without keys ran")
	}
}

func TestWindowTakeGrantsExactlyTheBudget(t *testing.T) {
	w := &Window{}
	if n, last := w.take(5); n != 5 || last {
		t.Fatalf("unbounded take = %d, %v", n, last)
	}
	w.Budget = new(atomic.Int64)
	w.Budget.Store(10)
	var got int
	for _, ask := range []int{4, 4, 4, 4} {
		n, _ := w.take(ask)
		got += n
	}
	if got != 10 {
		t.Fatalf("granted %d, want 10", got)
	}
}

// A server dying under many connections is reported on one line, each
// distinct error once with its count, and stays matchable.
func TestSummarizeErrs(t *testing.T) {
	if summarizeErrs([]error{nil, nil}) != nil {
		t.Fatal("no errors gave an error")
	}
	reset := errors.New("read: connection reset by peer")
	errs := []error{nil, io.EOF, io.EOF, reset, io.EOF}
	err := summarizeErrs(errs)
	if want := "EOF (3 connections); read: connection reset by peer"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	if !errors.Is(err, io.EOF) {
		t.Fatal("the first error is not wrapped")
	}
	if err := summarizeErrs([]error{reset}); err != reset {
		t.Fatalf("a single error changed: %v", err)
	}
	many := []error{errors.New("a"), errors.New("b"), errors.New("c"), errors.New("d"), errors.New("e")}
	if got, want := summarizeErrs(many).Error(), "a; b; c; 2 more distinct errors"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
