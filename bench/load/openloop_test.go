package load

import (
	"math"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/fakezk"
	"github.com/corral-db/corral/wire"
)

// TestOpenScheduleArithmetic: request k of a connection is due at
// T0 + k/rate; dueBy counts those due at or before a time, dueBefore
// those strictly before, and settle counts the measured interval's
// requests and the unsent ones among them.
func TestOpenScheduleArithmetic(t *testing.T) {
	t0 := time.Unix(1000, 0)
	o := &openSchedule{pacer: Pacer{Rate: 100, T0: t0, Start: t0.Add(time.Second), End: t0.Add(3 * time.Second)}}
	for _, c := range []struct {
		at         time.Duration
		by, before int64
	}{
		{-time.Millisecond, 0, 0},
		{0, 1, 0},                     // request 0 is due at t0
		{9 * time.Millisecond, 1, 1},  // request 1 at t0+10ms
		{10 * time.Millisecond, 2, 1}, // exactly due: counted by dueBy only
		{time.Second, 101, 100},       // requests 0..100
		{2*time.Second + 5*time.Millisecond, 201, 201},
	} {
		at := t0.Add(c.at)
		if got := o.dueBy(at); got != c.by {
			t.Errorf("dueBy(t0%+v) = %d, want %d", c.at, got, c.by)
		}
		if got := o.dueBefore(at); got != c.before {
			t.Errorf("dueBefore(t0%+v) = %d, want %d", c.at, got, c.before)
		}
	}
	if got := o.pacer.dueAt(250); !got.Equal(t0.Add(2500 * time.Millisecond)) {
		t.Errorf("dueAt(250) = t0+%v, want t0+2.5s", got.Sub(t0))
	}
	// The measured interval [t0+1s, t0+3s) holds requests 100..299.
	for _, c := range []struct{ next, due, unsent int64 }{
		{300, 200, 0},   // all sent
		{250, 200, 50},  // the last 50 still waiting
		{40, 200, 200},  // none of the interval's sent (only warm-up ones)
		{100, 200, 200}, // exactly up to the interval's first
	} {
		o.next = c.next
		o.settle()
		if o.due != c.due || o.unsent != c.unsent {
			t.Errorf("next %d: due %d unsent %d, want %d %d", c.next, o.due, o.unsent, c.due, c.unsent)
		}
	}
}

// TestOpenWindowsShareTheRate: n connections at rate/n each, offset by
// 1/rate, together issue one request every 1/rate; rate 0 shares the
// Closed-loop window.
func TestOpenWindowsShareTheRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := &Window{Start: t0, End: t0.Add(time.Second)}
	if ws := openWindows(w, 0, 3, t0); ws[0] != w || ws[2] != w || w.open != nil {
		t.Fatalf("closed loop got its own windows")
	}
	if ws := openWindows(w, math.NaN(), 2, t0); ws[1] != w {
		t.Fatalf("a NaN rate ran open loop")
	}
	ws := openWindows(w, 400, 4, t0)
	seen := map[time.Duration]bool{}
	for _, wi := range ws {
		if wi == w || wi.open == nil || wi.Start != w.Start || wi.End != w.End {
			t.Fatalf("window %+v", wi)
		}
		for k := range int64(25) {
			seen[wi.open.pacer.dueAt(k).Sub(t0)] = true
		}
	}
	// 4 × 25 requests at 2.5ms spacing: every slot of the first 250ms once.
	for i := range 100 {
		at := time.Duration(i) * 2500 * time.Microsecond
		if !seen[at] {
			t.Fatalf("no connection sends at t0+%v (seen %d times)", at, len(seen))
		}
	}
	if len(seen) != 100 {
		t.Fatalf("%d distinct send times, want 100", len(seen))
	}
}

// TestOpenLoopSendsTheSchedule: against a server that keeps up, the
// phase sends what the schedule holds (every request sent or counted
// unsent), and each latency from the intended send time is at least the
// one from the actual send.
func TestOpenLoopSendsTheSchedule(t *testing.T) {
	ctx := testCtx(t)
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	r, err := RunPhase(ctx, PhaseConfig{
		Target: "fake", Addrs: []string{s.Addr()}, Workload: WorkloadCreate,
		Conns: 4, Inflight: 8, ValueSize: 16, Duration: 500 * time.Millisecond, Rate: 2000, Prefix: "o",
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Check()
	ol := r.OpenLoop
	if ol == nil || ol.Rate != 2000 {
		t.Fatalf("open-loop result %+v", ol)
	}
	if ol.Due != 1000 { // 2000/s × 0.5s, no warm-up
		t.Errorf("due %d, want 1000", ol.Due)
	}
	sent := ol.Due - ol.Unsent
	t.Logf("%d due, %d unsent; latency from send %+v, from intended %+v", ol.Due, ol.Unsent, r.Latency, ol.FromIntended)
	if got := s.Count(wire.OpCreate); int64(got) != sent+1 { // + the root
		t.Errorf("server saw %d creates, want %d sent + the root", got, sent)
	}
	if r.Ops+r.Errors > sent || r.Keys.Total() != sent {
		t.Errorf("ops %d errors %d keys %d, but %d sent", r.Ops, r.Errors, r.Keys.Total(), sent)
	}
	l, li := r.Latency, ol.FromIntended
	if li.Count != l.Count || li.P50 < l.P50 || li.P99 < l.P99 || li.Max < l.Max {
		t.Errorf("latency from intended %+v below latency from send %+v", li, l)
	}
}

// TestOpenLoopChargesTheWait: a server that answers only after a ping (one
// request at a time, at most one per ping interval) stalls a window of one.
// The requests the schedule holds meanwhile wait, are counted unsent if
// they never leave, and their latency from the intended time includes the
// wait: request j cannot be answered before t0 + (j+1)·100ms, and was due
// at t0 + j·5ms.
func TestOpenLoopChargesTheWait(t *testing.T) {
	ctx := testCtx(t)
	s := fakezk.NewServer(t, fakezk.PingGate, 0)
	s.Timeout = 300 // ms: a connection idle for 100ms pings
	r, err := RunPhase(ctx, PhaseConfig{
		Target: "fake", Addrs: []string{s.Addr()}, Workload: WorkloadCreate,
		Conns: 1, Inflight: 1, ValueSize: 16, Duration: 2 * time.Second, Rate: 200, Prefix: "w",
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Check()
	ol := r.OpenLoop
	if ol == nil || ol.Due != 400 {
		t.Fatalf("open-loop result %+v, want 400 due", ol)
	}
	sent := ol.Due - ol.Unsent
	t.Logf("%d due, %d unsent; latency from send %+v, from intended %+v", ol.Due, ol.Unsent, r.Latency, ol.FromIntended)
	if got := s.Count(wire.OpCreate); int64(got) != sent+1 {
		t.Errorf("server saw %d creates, want %d sent + the root", got, sent)
	}
	// At most one reply per 100ms ping interval in 2s.
	if sent > 30 || ol.Unsent < ol.Due-30 {
		t.Errorf("%d sent, %d unsent: the window of one was not respected", sent, ol.Unsent)
	}
	n := ol.FromIntended.Count
	if n == 0 || n != r.Latency.Count {
		t.Fatalf("%d latencies from intended, %d from send", n, r.Latency.Count)
	}
	// The last measured request, j = n-1, waited at least 95ms per request
	// before it: (j+1)·100ms - j·5ms.
	if want := time.Duration(n-1)*95*time.Millisecond + 100*time.Millisecond; ol.FromIntended.Max < want.Microseconds()*999/1000 {
		t.Errorf("max latency from intended %dµs over %d requests, want at least %v", ol.FromIntended.Max, n, want)
	}
	if ol.FromIntended.Max < r.Latency.Max {
		t.Errorf("latency from intended %+v below latency from send %+v", ol.FromIntended, r.Latency)
	}
}
