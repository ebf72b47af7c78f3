package failures

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/failover"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/internal/fakezk"
	"github.com/corral-db/corral/wire"
)

// preloadFake gives an in-process fake server every node of ks.
func preloadFake(s *fakezk.Server, ks *load.KeySpace, data []byte) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for k, c := range ks.Counts {
		for i := range c {
			p := ks.Path(k, i)
			s.Nodes[p], s.Attempted[p] = data, true
		}
	}
}

// served is the getData and setData requests s has read.
func served(s *fakezk.Server) int { return s.Count(wire.OpGetData) + s.Count(wire.OpSetData) }

// checkFakeButResets is fakeServer.check without the read errors of a
// client that hung up abruptly (a connection reset), which these tests
// cause on purpose.
func checkFakeButResets(t *testing.T, s *fakezk.Server) {
	t.Helper()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, p := range s.Problems {
		if !strings.HasPrefix(p, "read: ") {
			t.Error("fake server:", p)
		}
	}
}

func timelineTotal(tl *timeline, series int) int64 {
	var n int64
	for i := range tl.counts[series] {
		n += tl.counts[series][i].Load()
	}
	return n
}

// newTestClient is a client of 8 in flight, 70% reads, over addrs, whose
// timeline covers a minute from now.
func newTestClient(t *testing.T, addrs []string, ks *load.KeySpace, data []byte, end time.Duration) *tlClient {
	t.Helper()
	picker, err := load.NewKeyPicker(ks)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	return &tlClient{
		addrs: addrs, inflight: 8, timeout: 4 * time.Second, src: load.NewMixedSource(picker, 70, data, 1),
		tl: NewTimeline(start, time.Minute, 100*time.Millisecond), end: start.Add(end), log: func(string, ...any) {},
	}
}

// TestClientMovesToALiveServerAndContinues kills the server the client is
// on (an in-process fake): the client must open a session on the other and
// keep its requests going.
func TestClientMovesToALiveServerAndContinues(t *testing.T) {
	ks := &load.KeySpace{Root: load.DefaultRoot, Prefix: "k", Counts: []int64{20, 10}}
	data := load.Value(64)
	a := fakezk.NewServer(t, fakezk.InOrder, 0)
	b := fakezk.NewServer(t, fakezk.InOrder, 0)
	preloadFake(a, ks, data)
	preloadFake(b, ks, data)
	cl := newTestClient(t, []string{a.Addr(), b.Addr()}, ks, data, time.Minute)
	ctx, cancel := context.WithCancel(failuresBenchTestCtx(t))
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		cl.run(ctx)
	}()
	// A server has read up to a window more requests than the client has
	// replies for (the rest are in flight, then lost or cancelled), so
	// each wait asks for a window more than the replies checked below.
	if err := failover.PollUntil(ctx, done, 10*time.Second, func() bool { return served(a) >= 200+cl.inflight }); err != nil {
		t.Fatal("before the crash:", err)
	}
	a.Crash()
	if err := failover.PollUntil(ctx, done, 10*time.Second, func() bool { return served(b) >= 200+cl.inflight }); err != nil {
		t.Fatal("after the crash:", err)
	}
	cancel()
	<-done
	b.Mu.Lock()
	sessions := b.Sessions
	b.Mu.Unlock()
	if cl.sessions != 2 || cl.reconnects != 1 || sessions != 1 || cl.cur != 1 {
		t.Errorf("client opened %d sessions (%d reconnects), now on %d; the live server saw %d handshakes",
			cl.sessions, cl.reconnects, cl.cur, sessions)
	}
	ok := timelineTotal(cl.tl, SeriesReads) + timelineTotal(cl.tl, SeriesWrites)
	if ok < 400 || timelineTotal(cl.tl, seriesErrors) != 0 || timelineTotal(cl.tl, SeriesReconnects) != 1 {
		t.Errorf("timeline: %d replies, %d errors, %d reconnects", ok, timelineTotal(cl.tl, seriesErrors), timelineTotal(cl.tl, SeriesReconnects))
	}
	// Every request issued was either answered or counted lost, and no
	// reply came without the server having read its request.
	lost := timelineTotal(cl.tl, SeriesLost)
	if issued := cl.src.Reads + cl.src.Writes; ok+lost != issued || ok > int64(served(a)+served(b)) {
		t.Errorf("%d replies and %d lost of %d requests issued, %d read by the servers", ok, lost, issued, served(a)+served(b))
	}
	checkFakeButResets(t, a)
	checkFakeButResets(t, b)
}

// TestClientLeavesAServerThatStopsAnswering: a server that keeps the
// connection but answers nothing costs the client its window, lost, after
// the read timeout (2/3 of the session timeout), and the client moves on.
func TestClientLeavesAServerThatStopsAnswering(t *testing.T) {
	ks := &load.KeySpace{Root: load.DefaultRoot, Prefix: "k", Counts: []int64{10}}
	data := load.Value(64)
	a := fakezk.NewServer(t, fakezk.Silent, 0)
	a.Timeout = 600 // ms: a 400 ms read timeout
	b := fakezk.NewServer(t, fakezk.InOrder, 0)
	preloadFake(b, ks, data)
	cl := newTestClient(t, []string{a.Addr(), b.Addr()}, ks, data, time.Minute)
	ctx, cancel := context.WithCancel(failuresBenchTestCtx(t))
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		cl.run(ctx)
	}()
	// served(b) runs up to a window ahead of the replies (see above).
	if err := failover.PollUntil(ctx, done, 10*time.Second, func() bool { return served(b) >= 100+cl.inflight }); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if got := served(a); got != cl.inflight {
		t.Errorf("silent server read %d requests, want one window of %d", got, cl.inflight)
	}
	if lost := timelineTotal(cl.tl, SeriesLost); lost < int64(cl.inflight) {
		t.Errorf("%d requests counted lost, want at least the silent server's %d", lost, cl.inflight)
	}
	if cl.reconnects != 1 || timelineTotal(cl.tl, SeriesReads)+timelineTotal(cl.tl, SeriesWrites) < 100 {
		t.Errorf("%d reconnects, %d replies", cl.reconnects, timelineTotal(cl.tl, SeriesReads)+timelineTotal(cl.tl, SeriesWrites))
	}
	checkFakeButResets(t, b)
}

// TestClientClosesItsSessionAtTheEnd: at its end the client sends
// CloseSession behind its last requests and waits for their replies, so
// nothing is lost and the session does not linger.
func TestClientClosesItsSessionAtTheEnd(t *testing.T) {
	ks := &load.KeySpace{Root: load.DefaultRoot, Prefix: "k", Counts: []int64{10}}
	data := load.Value(64)
	s := fakezk.NewServer(t, fakezk.InOrder, 0)
	preloadFake(s, ks, data)
	cl := newTestClient(t, []string{s.Addr()}, ks, data, time.Second)
	cl.run(failuresBenchTestCtx(t))
	s.Mu.Lock()
	closed := s.Closed
	s.Mu.Unlock()
	replies := timelineTotal(cl.tl, SeriesReads) + timelineTotal(cl.tl, SeriesWrites)
	if cl.lastErr != nil || cl.sessions != 1 || closed != 1 || timelineTotal(cl.tl, SeriesLost) != 0 ||
		replies != cl.src.Reads+cl.src.Writes {
		t.Errorf("client: %d sessions, last error %v; server saw %d closeSession; %d of %d requests answered, %d lost",
			cl.sessions, cl.lastErr, closed, replies, cl.src.Reads+cl.src.Writes, timelineTotal(cl.tl, SeriesLost))
	}
	s.Check()
}
