package recipes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/client/recipes"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// TestExpiry: holders learn that they lost what they held.
func TestExpiry(t *testing.T) {
	srv := start(t)
	addr := srv.Addr()

	// The default: a holder whose connection drops gives the lock up at
	// once, before the server can expire its session and let a waiter in.
	t.Run("MutexLostOnDisconnect", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		g := newGate()
		a, b := connect(t, addr, client.Dialer(g.dial)), connect(t, addr)
		ha := must[*recipes.Held](t)(recipes.NewMutex(a, dir).Lock(ctx))
		got := make(chan error, 1)
		go func() {
			hb, err := recipes.NewMutex(b, dir).Lock(ctx)
			if err == nil {
				select {
				case <-ha.Lost():
				default:
					err = errors.New("b acquired while a still held the lock")
				}
				hb.Release(ctx)
			}
			got <- err
		}()
		waitChildren(t, b, dir, 2)

		g.Cut()
		closedWithin(t, ha.Lost(), "Lost after the connection dropped")
		if err := ha.Err(); !errors.Is(err, client.ErrConnectionLoss) {
			t.Fatalf("Err = %v, want connection loss", err)
		}
		expire(t, srv, a)
		select {
		case err := <-got:
			ok(t, err)
		case <-time.After(waitLimit):
			t.Fatal("b never got the lock after a's session expired")
		}
		g.Heal()
		waitConnState(t, a, client.StateExpired)
		if err := ha.Err(); !errors.Is(err, client.ErrConnectionLoss) {
			t.Fatalf("Err changed to %v", err)
		}
		ok(t, ha.Release(ctx))
	})

	// A lock lost to a dropped connection is deleted once the connection
	// is back, so waiters do not wait for the session's end.
	t.Run("SimpleLockCleanedAfterReconnect", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		p := root(t)
		g := newGate()
		a, b := connect(t, addr, client.Dialer(g.dial)), connect(t, addr)
		ha := must[*recipes.Held](t)(recipes.NewSimpleLock(a, p).Lock(ctx))
		g.Cut()
		closedWithin(t, ha.Lost(), "Lost after the connection dropped")
		g.Heal()
		hb := must[*recipes.Held](t)(recipes.NewSimpleLock(b, p).Lock(ctx))
		if a.State() != client.StateConnected || a.SessionID() == 0 {
			t.Fatalf("a's session: %v", a.State())
		}
		ok(t, hb.Release(ctx))
	})

	// With KeepOnDisconnect the hold survives a reconnect, and ends when
	// the session is found expired.
	t.Run("KeepOnDisconnect", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		g := newGate()
		a, b := connect(t, addr, client.Dialer(g.dial)), connect(t, addr)
		ha := must[*recipes.Held](t)(recipes.NewMutex(a, dir, recipes.KeepOnDisconnect()).Lock(ctx))

		g.Cut()
		waitConnState(t, a, client.StateDisconnected)
		g.Heal()
		waitConnState(t, a, client.StateConnected)
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := recipes.NewMutex(b, dir).Lock(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("b's Lock while a holds = %v", err)
		}
		notClosed(t, ha.Lost(), "Lost after a reconnect within the session")

		g.Cut()
		expire(t, srv, a)
		g.Heal()
		closedWithin(t, ha.Lost(), "Lost after the session expired")
		if err := ha.Err(); !errors.Is(err, client.ErrSessionExpired) {
			t.Fatalf("Err = %v, want session expired", err)
		}
		hb := must[*recipes.Held](t)(recipes.NewMutex(b, dir).Lock(ctx))
		ok(t, hb.Release(ctx))
		ok(t, ha.Release(ctx))
	})

	t.Run("GroupMemberExpires", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		g := newGate()
		a, obs := connect(t, addr, client.Dialer(g.dial)), connect(t, addr)
		ha := must[*recipes.Held](t)(recipes.NewGroup(a, dir).Join(ctx, "", []byte("a")))
		g.Cut()
		waitConnState(t, a, client.StateDisconnected)
		notClosed(t, ha.Lost(), "membership after a dropped connection") // the node is still there
		expire(t, srv, a)
		g.Heal()
		closedWithin(t, ha.Lost(), "membership Lost after expiry")
		if err := ha.Err(); !errors.Is(err, client.ErrSessionExpired) {
			t.Fatalf("Err = %v", err)
		}
		ms, _, err := recipes.NewGroup(obs, dir).Members(ctx)
		ok(t, err)
		wantMembers(t, ms)
	})
}

// TestPauseExpiry freezes the server longer than the session timeout.
// Holders cut off from it behave as documented: the default gives up at
// the disconnect, before the server expires anything; KeepOnDisconnect
// holds on and learns of the expiry when it reconnects.
func TestPauseExpiry(t *testing.T) {
	// Mostly waiting on a frozen server of its own: it runs beside
	// TestChaos rather than after it.
	t.Parallel()
	srv := start(t)
	addr := srv.Addr()
	ctx := testCtx(t)
	dir := root(t)
	gs, gk := newGate(), newGate()
	strict := connect(t, addr, client.Dialer(gs.dial))
	keep := connect(t, addr, client.Dialer(gk.dial))
	hs := must[*recipes.Held](t)(recipes.NewMutex(strict, dir+"/strict").Lock(ctx))
	hk := must[*recipes.Held](t)(recipes.NewMutex(keep, dir+"/keep", recipes.KeepOnDisconnect()).Lock(ctx))

	srv.Pause()
	paused := time.Now()
	closedWithin(t, hs.Lost(), "strict holder's Lost while the server is frozen")
	if err := hs.Err(); !errors.Is(err, client.ErrConnectionLoss) {
		t.Fatalf("strict holder's Err = %v", err)
	}
	notClosed(t, hk.Lost(), "KeepOnDisconnect holder while the server is frozen")
	// Frozen well past the session timeout (plus the server's tick,
	// which rounds expiry up); keep the clients away while it expires
	// their sessions, so that none is revalidated first.
	time.Sleep(2*sessionTimeout + harness.TickTime - time.Since(paused))
	gs.Cut()
	gk.Cut()
	srv.Resume()
	obs := connect(t, addr)
	waitGone(t, obs, hk.Path())
	waitGone(t, obs, hs.Path())
	gs.Heal()
	gk.Heal()
	closedWithin(t, hk.Lost(), "KeepOnDisconnect holder's Lost after expiry")
	if err := hk.Err(); !errors.Is(err, client.ErrSessionExpired) {
		t.Fatalf("KeepOnDisconnect holder's Err = %v", err)
	}
	if err := hs.Err(); !errors.Is(err, client.ErrConnectionLoss) {
		t.Fatalf("strict holder's Err changed to %v", err)
	}
	waitConnState(t, strict, client.StateExpired)
	waitConnState(t, keep, client.StateExpired)
	// The locks are free again.
	h := must[*recipes.Held](t)(recipes.NewMutex(obs, dir+"/keep").Lock(ctx))
	ok(t, h.Release(ctx))
}

// expire ends c's session on the server: with c cut off, a raw client
// takes the session over and closes it. c learns on reconnect.
func expire(t *testing.T, srv *harness.Server, c *client.Conn) {
	t.Helper()
	waitConnState(t, c, client.StateDisconnected)
	raw := harness.Dial(t, srv.Addr())
	defer raw.Close()
	if _, err := raw.Connect(harness.ConnectRequest{LastZxidSeen: c.LastZxid(), TimeOut: 10000,
		SessionID: c.SessionID(), Passwd: c.SessionPassword()}); err != nil {
		t.Fatal(err)
	}
	if p, _ := raw.Call(wire.OpCloseSession, nil); p.Err != wire.CodeOK {
		t.Fatalf("closeSession: %v", p.Err)
	}
}

func waitConnState(t *testing.T, c *client.Conn, s client.State) {
	t.Helper()
	if !testutil.Within(waitLimit, func() bool { return c.State() == s }) {
		t.Fatalf("client state %v, want %v", c.State(), s)
	}
}

// waitGone polls until p does not exist.
func waitGone(t *testing.T, c *client.Conn, p string) {
	t.Helper()
	var err error
	if !testutil.Within(waitLimit, func() bool {
		var st *client.Stat
		st, err = c.Exists(context.Background(), p)
		return err == nil && st == nil
	}) {
		t.Fatalf("%s still there (%v)", p, err)
	}
}
