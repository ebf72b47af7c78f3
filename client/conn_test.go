package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/wire"
)

func TestParseServers(t *testing.T) {
	for _, tc := range []struct {
		in     []string
		addrs  []string
		chroot string
		bad    bool
	}{
		{in: []string{"a:1"}, addrs: []string{"a:1"}},
		{in: []string{"a:1,b:2/app/x"}, addrs: []string{"a:1", "b:2"}, chroot: "/app/x"},
		{in: []string{"a:1", "b:2/app"}, addrs: []string{"a:1", "b:2"}, chroot: "/app"},
		{in: []string{"a", "[::1]:5"}, addrs: []string{"a:2181", "[::1]:5"}},
		{in: []string{"a:1/"}, addrs: []string{"a:1"}},
		{in: []string{"a:1/app/"}, bad: true},
		{in: []string{""}, bad: true},
	} {
		addrs, chroot, err := parseServers(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || !slices.Equal(addrs, tc.addrs) || chroot != tc.chroot {
			t.Errorf("%q = %q %q %v, want %q %q", tc.in, addrs, chroot, err, tc.addrs, tc.chroot)
		}
	}
}

func TestHostListRoundRobin(t *testing.T) {
	h := newHostList([]string{"a", "b", "c"}, rand.New(rand.NewPCG(1, 2)))
	var seen []string
	for i := range 6 {
		a, wrapped := h.take()
		seen = append(seen, a)
		if wrapped != (i%3 == 2) {
			t.Fatalf("take %d wrapped=%v", i, wrapped)
		}
	}
	if !slices.Equal(seen[:3], seen[3:]) {
		t.Fatalf("not round robin: %v", seen)
	}
	first := slices.Clone(seen[:3])
	sort.Strings(first)
	if !slices.Equal(first, []string{"a", "b", "c"}) {
		t.Fatalf("not a permutation: %v", seen)
	}
}

func TestChrootMapping(t *testing.T) {
	c := &Conn{chroot: "/app"}
	for in, want := range map[string]string{"/": "/app", "/x": "/app/x"} {
		if got, err := c.serverPath(in); err != nil || got != want {
			t.Errorf("serverPath(%q) = %q %v", in, got, err)
		}
	}
	if _, err := c.serverPath("x"); !errorsIsBad(err) {
		t.Errorf("relative path: %v", err)
	}
	for in, want := range map[string]string{"/app": "/", "/app/x": "/x", "/apple": "/apple", ConfigPath: ConfigPath} {
		if got := c.clientPath(in); got != want {
			t.Errorf("clientPath(%q) = %q, want %q", in, got, want)
		}
	}
	if c.inChroot("/apple") || !c.inChroot("/app/x") || !c.inChroot("/app") {
		t.Error("inChroot")
	}
}

func errorsIsBad(err error) bool { return err != nil && wire.CodeOf(err) == wire.CodeBadArguments }

func TestErrorsMatchCodes(t *testing.T) {
	for err, code := range map[error]wire.Code{
		ErrConnectionLoss: wire.CodeConnectionLoss,
		ErrSessionExpired: wire.CodeSessionExpired,
		ErrClosed:         wire.CodeSessionExpired,
		ErrAuthFailed:     wire.CodeAuthFailed,
	} {
		wantIs(t, err.Error(), err, code)
		if wire.CodeOf(err) != code {
			t.Errorf("CodeOf(%v) = %v", err, wire.CodeOf(err))
		}
	}
	wantIs(t, "wrapped", fmt.Errorf("x: %w", ErrConnectionLoss), ErrConnectionLoss)
}

// TestPipelining: many requests are on the wire before the first reply;
// replies complete them in order.
func TestPipelining(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	const n = 200
	futs := make([]*Future[GetResult], n)
	for i := range futs {
		futs[i] = c.GetAsync(fmt.Sprintf("/n%d", i))
	}
	reqs := make([]fakeReq, n)
	for i := range reqs {
		reqs[i] = fc.next() // all read before anything is answered
		var pw wire.PathWatchRequest
		reqs[i].decode(t, &pw)
		if reqs[i].hdr.Type != wire.OpGetData || pw.Path != fmt.Sprintf("/n%d", i) || pw.Watch {
			t.Fatalf("request %d = %+v %+v", i, reqs[i].hdr, pw)
		}
		if i > 0 && reqs[i].hdr.Xid != reqs[i-1].hdr.Xid+1 {
			t.Fatalf("xids %d then %d", reqs[i-1].hdr.Xid, reqs[i].hdr.Xid)
		}
	}
	for i, f := range futs {
		select {
		case <-f.Done():
			t.Fatalf("future %d done before its reply", i)
		default:
		}
	}
	var e wire.Encoder
	for i, r := range reqs {
		fc.appendReply(&e, r.hdr.Xid, int64(10+i), wire.CodeOK,
			&wire.GetDataResponse{Data: []byte(fmt.Sprint(i)), Stat: wire.Stat{Version: int32(i)}})
	}
	fc.write(&e)
	for i, f := range futs {
		res, err := f.Result()
		if err != nil || string(res.Data) != fmt.Sprint(i) || res.Stat.Version != int32(i) {
			t.Fatalf("future %d = %+v %v", i, res, err)
		}
	}
	if c.LastZxid() != 10+n-1 {
		t.Fatalf("LastZxid %d", c.LastZxid())
	}
}

// TestReplyOutOfOrder: a reply that does not match the oldest request
// drops the connection (as the Java client does); both requests fail with
// ConnectionLoss and the client reconnects.
func TestReplyOutOfOrder(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	a, b := c.GetAsync("/a"), c.GetAsync("/b")
	fc.next()
	rb := fc.next()
	fc.reply(rb.hdr.Xid, 1, wire.CodeOK, &wire.GetDataResponse{})
	for _, fut := range []*Future[GetResult]{a, b} {
		_, err := fut.Result()
		wantIs(t, "out-of-order reply", err, ErrConnectionLoss)
	}
	fc2 := f.accept()
	if fc2.req.SessionID != 0x1234 {
		t.Fatalf("reconnect with session %#x", fc2.req.SessionID)
	}
}

// TestConnectionLossThenQueued: a request in flight when the connection
// breaks fails with ConnectionLoss (never resent); one made while
// disconnected goes out on the next connection, after the handshake that
// carries session id, password and the last zxid.
func TestConnectionLossThenQueued(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	w := c.SetAsync("/a", []byte("x"), -1)
	r := fc.next()
	fc.reply(r.hdr.Xid, 41, wire.CodeOK, &wire.StatResponse{})
	if _, err := w.Result(); err != nil {
		t.Fatal(err)
	}
	lost := c.SetAsync("/a", []byte("y"), -1)
	fc.next()
	fc.nc.Close()
	_, err := lost.Result()
	wantIs(t, "in-flight write", err, ErrConnectionLoss)

	queued := c.GetAsync("/a")
	fc2 := f.accept()
	if fc2.req.SessionID != 0x1234 || string(fc2.req.Passwd) != "0123456789abcdef" ||
		fc2.req.LastZxidSeen != 41 || !fc2.req.HasReadOnly || fc2.req.ReadOnly {
		t.Fatalf("reconnect request %+v", fc2.req)
	}
	fc2.handshake(0x1234, 30000)
	q := fc2.next()
	var pw wire.PathWatchRequest
	q.decode(t, &pw)
	if q.hdr.Type != wire.OpGetData || pw.Path != "/a" {
		t.Fatalf("first request after reconnect: %+v %q (the lost write must not be resent)", q.hdr, pw.Path)
	}
	fc2.reply(q.hdr.Xid, 42, wire.CodeOK, &wire.GetDataResponse{Data: []byte("x")})
	if res, err := queued.Result(); err != nil || string(res.Data) != "x" {
		t.Fatalf("queued = %+v %v", res, err)
	}
}

// TestReconnectPriming: on a new connection the client sends, in order,
// its credentials, the watches to re-register (relative to the last zxid
// seen), then the calls queued meanwhile.
func TestReconnectPriming(t *testing.T) {
	f := newFake(t)
	type res struct {
		c   *Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := Connect(context.Background(), []string{f.addr() + "/chroot"}, AuthDigest("u", "p"))
		ch <- res{c, err}
	}()
	fc := f.accept()
	fc.handshake(0x1234, 30000)
	a := fc.next()
	var ap wire.AuthPacket
	a.decode(t, &ap)
	if a.hdr.Xid != wire.XidAuth || a.hdr.Type != wire.OpAuth || ap.Scheme != "digest" || string(ap.Auth) != "u:p" {
		t.Fatalf("first frame %+v %+v", a.hdr, ap)
	}
	select {
	case <-ch:
		t.Fatal("Connect returned before the credential was accepted")
	default:
	}
	fc.reply(wire.XidAuth, 0, wire.CodeOK, nil)
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := r.c
	defer f.closeClient(c)

	// Registrations: AddAuth, then one watch of each kind.
	go func() {
		ctx := context.Background()
		c.AddAuth(ctx, "digest", []byte("v:q"))
		c.GetW(ctx, "/d")
		c.ExistsW(ctx, "/e")
		c.ChildrenW(ctx, "/c")
		c.AddWatch(ctx, "/p", false)
		c.AddWatch(ctx, "/", true)
	}()
	fc.next()
	fc.reply(wire.XidAuth, 0, wire.CodeOK, nil)
	for i, code := range []wire.Code{wire.CodeOK, wire.CodeNoNode, wire.CodeOK, wire.CodeOK, wire.CodeOK} {
		q := fc.next()
		var body wire.Record
		switch q.hdr.Type {
		case wire.OpGetData:
			body = &wire.GetDataResponse{}
		case wire.OpGetChildren:
			body = &wire.GetChildrenResponse{}
		case wire.OpAddWatch:
			body = &wire.ErrorResponse{}
		}
		fc.reply(q.hdr.Xid, int64(70+i), code, body)
	}
	testutil.Eventually(t, fakeWait, "watches registered", func() bool {
		_, _, _, p, rec := c.watches.watchedPaths()
		return len(p) == 1 && len(rec) == 1
	})

	fc.nc.Close()
	waitDisconnected(t, c)
	queued := c.ExistsAsync("/q")
	fc2 := f.accept()
	if fc2.req.LastZxidSeen != 74 {
		t.Fatalf("LastZxidSeen %d, want 74", fc2.req.LastZxidSeen)
	}
	fc2.handshake(0x1234, 30000)
	var auths []string
	for range 2 {
		a := fc2.next()
		var ap wire.AuthPacket
		a.decode(t, &ap)
		if a.hdr.Type != wire.OpAuth {
			t.Fatalf("expected auth, got op %d", a.hdr.Type)
		}
		auths = append(auths, string(ap.Auth))
	}
	if !slices.Equal(auths, []string{"u:p", "v:q"}) {
		t.Fatalf("credentials re-sent %q", auths)
	}
	sw := fc2.next()
	var s2 wire.SetWatches2
	sw.decode(t, &s2)
	if sw.hdr.Type != wire.OpSetWatches2 || sw.hdr.Xid <= 0 || s2.RelativeZxid != 74 ||
		!slices.Equal(s2.DataWatches, []string{"/chroot/d"}) || !slices.Equal(s2.ExistWatches, []string{"/chroot/e"}) ||
		!slices.Equal(s2.ChildWatches, []string{"/chroot/c"}) || !slices.Equal(s2.PersistentWatches, []string{"/chroot/p"}) ||
		!slices.Equal(s2.PersistentRecursiveWatches, []string{"/chroot"}) {
		t.Fatalf("SetWatches2 %+v %+v", sw.hdr, s2)
	}
	q := fc2.next()
	if q.hdr.Type != wire.OpExists {
		t.Fatalf("queued call sent as op %d", q.hdr.Type)
	}
	fc2.reply(wire.XidAuth, 0, wire.CodeOK, nil)
	fc2.reply(wire.XidAuth, 0, wire.CodeOK, nil)
	fc2.reply(sw.hdr.Xid, 75, wire.CodeOK, nil)
	fc2.reply(q.hdr.Xid, 75, wire.CodeOK, &wire.StatResponse{Stat: wire.Stat{Version: 3}})
	if st, err := queued.Result(); err != nil || st.Version != 3 {
		t.Fatalf("queued call %+v %v", st, err)
	}
}

// TestSetWatchesSplit: re-registration is split into frames of ~128 KB of
// paths; plain SetWatches when no persistent watch is involved.
func TestSetWatchesSplit(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	const n = 300
	long := strings.Repeat("x", 1000)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, _, err := c.GetW(context.Background(), fmt.Sprintf("/%s%d", long, i)); err != nil {
				t.Error(err)
			}
		}()
	}
	for range n {
		q := fc.next()
		fc.reply(q.hdr.Xid, 5, wire.CodeOK, &wire.GetDataResponse{})
	}
	wg.Wait()
	fc.nc.Close()
	fc2 := f.accept()
	fc2.handshake(0x1234, 30000)
	var got []string
	frames := 0
	for len(got) < n {
		q := fc2.next()
		if q.hdr.Type != wire.OpSetWatches {
			t.Fatalf("op %d, want setWatches", q.hdr.Type)
		}
		var sw wire.SetWatches
		q.decode(t, &sw)
		size := 0
		for _, p := range sw.DataWatches {
			size += len(p)
		}
		if size > setWatchesMaxPaths || len(sw.ExistWatches)+len(sw.ChildWatches) != 0 {
			t.Fatalf("frame with %d bytes of paths", size)
		}
		got = append(got, sw.DataWatches...)
		frames++
		fc2.reply(q.hdr.Xid, 5, wire.CodeOK, nil)
	}
	if frames < 3 || len(got) != n {
		t.Fatalf("%d paths in %d frames", len(got), frames)
	}
}

// TestZxidNeverBackwards: a reply with a lower zxid does not lower what
// the client presents on reconnect.
func TestZxidNeverBackwards(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	for _, z := range []int64{100, 50} {
		fut := c.ExistsAsync("/")
		q := fc.next()
		fc.reply(q.hdr.Xid, z, wire.CodeOK, &wire.StatResponse{})
		if _, err := fut.Result(); err != nil {
			t.Fatal(err)
		}
	}
	fc.reply(wire.XidPing, 200, wire.CodeOK, nil) // pings do not count
	fc.nc.Close()
	fc2 := f.accept()
	if fc2.req.LastZxidSeen != 100 {
		t.Fatalf("LastZxidSeen %d, want 100", fc2.req.LastZxidSeen)
	}
}

// TestHeartbeat: an idle client pings (xid -2, op 11) well within its
// session timeout of the last frame it sent, so the server hears from it
// in time, and stays on the same connection while the server answers.
// It pings once idle for a third of the timeout, seen on a ticker of a
// twelfth; the test allows half.
// Its subject is the client's timers: it runs in a synctest bubble with a
// fake server on a pipe.
func TestHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 600 // ms
		f := newPipeFake(t, "127.0.0.1:1")
		_, fc := connectFake(t, f, timeout, pipeDialer(f))
		last := time.Now()
		for range 3 {
			p := fc.nextAny()
			if p.hdr.Xid != wire.XidPing || p.hdr.Type != wire.OpPing || len(p.body) != 0 {
				t.Fatalf("frame %+v, want a ping", p.hdr)
			}
			if idle := time.Since(last); idle <= 0 || idle > timeout*time.Millisecond/2 {
				t.Fatalf("pinged after %s idle, want within half the %d ms timeout", idle, timeout)
			}
			fc.reply(wire.XidPing, 1, wire.CodeOK, nil)
			last = time.Now()
		}
		synctest.Wait()
		select {
		case nc := <-f.conns:
			nc.Close()
			t.Fatal("client reconnected although the server answered its pings")
		default:
		}
	})
}

// TestMoveOnSilence: a server that stops answering is left for the next
// one, with the same session, once 2/3 of the session timeout has passed
// without a frame from it, and before the whole timeout (by when the
// session could be expired). It runs in a synctest bubble (fake servers
// on pipes), so the time it left at is exact.
func TestMoveOnSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 600 // ms
		a, b := newPipeFake(t, "127.0.0.1:1"), newPipeFake(t, "127.0.0.1:2")
		done := make(chan *Conn, 1)
		go func() {
			c, err := Connect(context.Background(), []string{a.addr(), b.addr()}, pipeDialer(a, b))
			if err != nil {
				t.Error(err)
			}
			done <- c
		}()
		synctest.Wait()
		first, other := a, b
		if len(a.conns) == 0 {
			first, other = b, a
		}
		fc := first.accept()
		fc.handshake(0x77, timeout) // then silence: no reply to anything
		silent := time.Now()
		c := <-done
		if c == nil {
			t.FailNow()
		}
		defer func() { a.closeConns(); b.closeConns(); c.Close() }()
		fc2 := other.accept()
		if left := time.Since(silent); left < 2*timeout*time.Millisecond/3 || left >= timeout*time.Millisecond {
			t.Fatalf("left a silent server after %s, want from 2/3 of the %d ms timeout to all of it", left, timeout)
		}
		if fc2.req.SessionID != 0x77 {
			t.Fatalf("moved with session %#x", fc2.req.SessionID)
		}
		fc2.handshake(0x77, timeout)
		fut := c.ExistsAsync("/")
		q := fc2.next()
		fc2.reply(q.hdr.Xid, 1, wire.CodeOK, &wire.StatResponse{})
		if _, err := fut.Result(); err != nil {
			t.Fatal(err)
		}
		if c.Server() != other.addr() {
			t.Fatalf("server %s, want %s", c.Server(), other.addr())
		}
	})
}

// TestExpiredOnReconnect: a handshake answered with timeout 0 kills the
// Conn: queued calls fail, watches end, Expired is announced.
func TestExpiredOnReconnect(t *testing.T) {
	f := newFake(t)
	events := make(chan Event, 16)
	c, fc := connectFake(t, f, 30000, EventCallback(func(ev Event) { events <- ev }))
	watchCh := make(chan (<-chan Event), 1)
	var w *Watcher
	go func() {
		_, _, ch, _ := c.GetW(context.Background(), "/w")
		watchCh <- ch
	}()
	q := fc.next()
	fc.reply(q.hdr.Xid, 3, wire.CodeOK, &wire.GetDataResponse{})
	ch := <-watchCh
	go func() {
		w, _ = c.AddWatch(context.Background(), "/p", true)
		watchCh <- nil
	}()
	q = fc.next()
	fc.reply(q.hdr.Xid, 3, wire.CodeOK, &wire.ErrorResponse{})
	<-watchCh

	fc.nc.Close()
	waitDisconnected(t, c)
	queued := c.GetAsync("/x")
	fc2 := f.accept()
	fc2.handshake(0, 0)
	if _, err := queued.Result(); !errorsIs(err, ErrSessionExpired) {
		t.Fatalf("queued call: %v", err)
	}
	ev := <-ch
	if ev.Type != EventNotWatching || ev.Path != "/w" || !errorsIs(ev.Err, ErrSessionExpired) {
		t.Fatalf("one-shot watch got %+v", ev)
	}
	if _, open := <-ch; open {
		t.Fatal("watch channel not closed")
	}
	for ev := range w.Events() {
		if ev.Type != EventSession {
			t.Fatalf("watcher got %+v", ev)
		}
	}
	wantIs(t, "watcher Err", w.Err(), ErrSessionExpired)
	var states []State
	for ev := range c.Events() {
		states = append(states, ev.State)
	}
	if !slices.Equal(states, []State{StateConnected, StateDisconnected, StateExpired}) {
		t.Fatalf("Events: %v", states)
	}
	if c.State() != StateExpired {
		t.Fatalf("state %v", c.State())
	}
	var cb []State
	for len(events) > 0 {
		cb = append(cb, (<-events).State)
	}
	if !slices.Equal(cb, states) { // the callback sees the same sequence
		t.Fatalf("callback saw %v, channel %v", cb, states)
	}
	_, err := c.Exists(context.Background(), "/")
	wantIs(t, "call after expiry", err, ErrSessionExpired)
}

// waitDisconnected waits until the client has noticed a dropped
// connection, so that a call made next is queued rather than sent on the
// dying connection.
func waitDisconnected(t *testing.T, c *Conn) {
	t.Helper()
	testutil.Eventually(t, fakeWait, "client noticed the disconnect", func() bool {
		return c.State() == StateDisconnected
	})
}

// waitQueued waits until n calls wait in the send queue.
func waitQueued(t *testing.T, c *Conn, n int) {
	t.Helper()
	q := 0
	if !testutil.Within(fakeWait, func() bool {
		c.qmu.Lock()
		q = len(c.queue)
		c.qmu.Unlock()
		return q >= n
	}) {
		t.Fatalf("%d calls queued, want %d", q, n)
	}
}

func errorsIs(err, target error) bool { return err != nil && wire.CodeOf(err) == wire.CodeOf(target) }

// TestNotificationBeforeReply: a notification that precedes a reply, even
// in the same TCP segment, is in its channel when the call returns.
func TestNotificationBeforeReply(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	got := make(chan (<-chan Event), 1)
	go func() {
		_, ch, err := c.ExistsW(context.Background(), "/w")
		if err != nil {
			t.Error(err)
		}
		got <- ch
	}()
	q := fc.next()
	fc.reply(q.hdr.Xid, 3, wire.CodeNoNode, nil) // exists on a missing node still sets the watch
	ch := <-got
	for i := range 50 {
		fut := c.GetAsync("/other")
		q := fc.next()
		var e wire.Encoder
		if i == 49 {
			fc.appendReply(&e, wire.XidNotification, 9, wire.CodeOK,
				&wire.WatcherEvent{Type: wire.EventNodeCreated, State: wire.StateSyncConnected, Path: "/w"})
		}
		fc.appendReply(&e, q.hdr.Xid, 9, wire.CodeOK, &wire.GetDataResponse{})
		fc.write(&e)
		if _, err := fut.Result(); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-ch:
			if i != 49 || ev.Type != EventNodeCreated || ev.Path != "/w" || ev.Zxid != 9 {
				t.Fatalf("at %d: event %+v", i, ev)
			}
		default:
			if i == 49 {
				t.Fatal("event not delivered before the reply that followed it")
			}
		}
	}
}

// TestMaxBufferSize: a frame above the limit drops the connection.
func TestMaxBufferSize(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000, MaxBufferSize(1024))
	fut := c.GetAsync("/big")
	q := fc.next()
	fc.reply(q.hdr.Xid, 1, wire.CodeOK, &wire.GetDataResponse{Data: make([]byte, 4096)})
	_, err := fut.Result()
	wantIs(t, "oversized reply", err, ErrConnectionLoss)
	f.accept()
}

// TestAuthCompletesInOrder: ZooKeeper answers auth as soon as it reads it,
// ahead of earlier replies; the client still completes calls in order.
func TestAuthCompletesInOrder(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	a := c.GetAsync("/a")
	authDone := make(chan error, 1)
	go func() { authDone <- c.AddAuth(context.Background(), "digest", []byte("u:p")) }()
	qa := fc.next()
	qauth := fc.next()
	if qauth.hdr.Xid != wire.XidAuth {
		t.Fatalf("auth sent with xid %d", qauth.hdr.Xid)
	}
	fc.reply(wire.XidAuth, 0, wire.CodeOK, nil)
	b := c.GetAsync("/b") // behind the auth
	qb := fc.next()
	select {
	case err := <-authDone:
		t.Fatalf("AddAuth completed (%v) before the earlier call", err)
	default:
	}
	fc.reply(qa.hdr.Xid, 1, wire.CodeOK, &wire.GetDataResponse{})
	if err := <-authDone; err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	default:
		t.Fatal("AddAuth completed before the earlier call")
	}
	fc.reply(qb.hdr.Xid, 1, wire.CodeOK, &wire.GetDataResponse{})
	if _, err := b.Result(); err != nil {
		t.Fatal(err)
	}
}

// TestSASLOvertakes: a SASL reply (ordinary xid) that overtakes an
// earlier reply is matched out of band, and completions stay in order.
func TestSASLOvertakes(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	a := c.GetAsync("/a")
	saslDone := make(chan []byte, 1)
	go func() {
		tok, err := c.SASL(context.Background(), []byte("hi"))
		if err != nil {
			t.Error(err)
		}
		saslDone <- tok
	}()
	qa := fc.next()
	qs := fc.next()
	if qs.hdr.Type != wire.OpSASL {
		t.Fatalf("op %d, want sasl", qs.hdr.Type)
	}
	fc.reply(qs.hdr.Xid, 0, wire.CodeOK, &wire.SetSASLResponse{Token: []byte("challenge")})
	b := c.GetAsync("/b")
	qb := fc.next() // the connection is still up: the early reply was accepted
	fc.reply(qa.hdr.Xid, 1, wire.CodeOK, &wire.GetDataResponse{})
	if tok := <-saslDone; string(tok) != "challenge" {
		t.Fatalf("token %q", tok)
	}
	select {
	case <-a.Done():
	default:
		t.Fatal("SASL completed before the earlier call")
	}
	fc.reply(qb.hdr.Xid, 1, wire.CodeOK, &wire.GetDataResponse{})
	if _, err := b.Result(); err != nil {
		t.Fatal(err)
	}
}

// TestCanceledBeforeSend: a call whose context ends while it waits for a
// connection is never sent.
func TestCanceledBeforeSend(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	fc.nc.Close()
	fc2 := f.accept() // the client is waiting for our handshake reply
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Exists(ctx, "/canceled"); done <- err }()
	waitQueued(t, c, 1)
	cancel()
	wantIs(t, "canceled call", <-done, context.Canceled)
	later := c.ExistsAsync("/later")
	fc2.handshake(0x1234, 30000)
	q := fc2.next()
	var pw wire.PathWatchRequest
	q.decode(t, &pw)
	if pw.Path != "/later" {
		t.Fatalf("sent %q; the canceled call must be dropped", pw.Path)
	}
	fc2.reply(q.hdr.Xid, 1, wire.CodeOK, &wire.StatResponse{})
	if _, err := later.Result(); err != nil {
		t.Fatal(err)
	}
}

// TestMaxInFlight: a call beyond the limit waits for a slot.
func TestMaxInFlight(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000, MaxInFlight(4))
	var futs []*Future[*Stat]
	for range 4 {
		futs = append(futs, c.ExistsAsync("/"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Exists(ctx, "/")
	wantIs(t, "fifth call", err, context.DeadlineExceeded)
	for range 4 {
		q := fc.next()
		fc.reply(q.hdr.Xid, 1, wire.CodeOK, &wire.StatResponse{})
	}
	for _, f := range futs {
		if _, err := f.Result(); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		q := fc.next()
		fc.reply(q.hdr.Xid, 1, wire.CodeOK, &wire.StatResponse{})
	}()
	if _, err := c.Exists(context.Background(), "/"); err != nil {
		t.Fatal(err)
	}
}

// TestFailFast: after a whole session timeout without a connection,
// queued and new calls fail with ConnectionLoss instead of waiting; not
// before, since a connection could still come back to the session. The
// subject is a timer: it runs in a synctest bubble with two pipe fakes
// that take connections and never answer them. With two servers each
// connection attempt may take half the timeout, so the client has
// failed to reconnect once before the timeout has passed.
func TestFailFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 300 * time.Millisecond
		a, b := newPipeFake(t, "127.0.0.1:1"), newPipeFake(t, "127.0.0.1:2")
		done := make(chan *Conn, 1)
		go func() {
			c, err := Connect(context.Background(), []string{a.addr(), b.addr()}, pipeDialer(a, b))
			if err != nil {
				t.Error(err)
			}
			done <- c
		}()
		synctest.Wait()
		first := a
		if len(a.conns) == 0 {
			first = b
		}
		fc := first.accept()
		fc.handshake(0x1234, int32(timeout/time.Millisecond))
		c := <-done
		if c == nil {
			t.FailNow()
		}
		defer func() { a.closeConns(); b.closeConns(); c.Close() }()
		fc.nc.Close()
		synctest.Wait()
		if c.State() != StateDisconnected {
			t.Fatalf("state %v after the connection closed", c.State())
		}
		lost := time.Now()
		queued := c.ExistsAsync("/") // waits for a connection that never completes
		time.Sleep(timeout - time.Millisecond)
		synctest.Wait()
		select {
		case <-queued.Done():
			_, err := queued.Result()
			t.Fatalf("queued call ended within %s of losing the connection, before the session timeout: %v", time.Since(lost), err)
		default:
		}
		select {
		case <-queued.Done():
		case <-time.After(10 * timeout):
			t.Fatal("queued call still waits 10 session timeouts after the connection was lost")
		}
		_, err := queued.Result()
		wantIs(t, "queued call", err, ErrConnectionLoss)
		_, err = c.Exists(context.Background(), "/")
		wantIs(t, "new call", err, ErrConnectionLoss)
		if c.State() != StateDisconnected {
			t.Fatalf("state %v", c.State())
		}
	})
}

// TestCloseOrdersCloseSession: Close sends closeSession after the calls
// made before it and returns when the server answers.
func TestCloseOrdersCloseSession(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	fut := c.GetAsync("/a")
	q := fc.next()
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	cs := fc.next()
	if cs.hdr.Type != wire.OpCloseSession {
		t.Fatalf("op %d, want closeSession", cs.hdr.Type)
	}
	after := c.GetAsync("/after")
	fc.reply(q.hdr.Xid, 1, wire.CodeOK, &wire.GetDataResponse{Data: []byte("a")})
	fc.reply(cs.hdr.Xid, 2, wire.CodeOK, nil)
	<-closed
	if res, err := fut.Result(); err != nil || string(res.Data) != "a" {
		t.Fatalf("call before Close: %+v %v", res, err)
	}
	_, err := after.Result()
	wantIs(t, "call after Close", err, ErrClosed)
	if c.State() != StateClosed {
		t.Fatalf("state %v", c.State())
	}
}

// TestCloseWhileDisconnected: Close does not wait for a server.
func TestCloseWhileDisconnected(t *testing.T) {
	f := newFake(t)
	c, fc := connectFake(t, f, 30000)
	fc.nc.Close()
	f.accept() // reconnecting, waiting for a handshake reply that never comes
	queued := c.ExistsAsync("/")
	c.Close()
	_, err := queued.Result()
	wantIs(t, "queued call", err, ErrClosed)
}
