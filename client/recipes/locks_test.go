package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/client/recipes"
	"github.com/corral-db/corral/internal/testutil"
)

// TestLocks covers the three locks and leader election on one server,
// without faults: exclusion, order, cancellation, release, external
// deletion.
func TestLocks(t *testing.T) {
	srv := start(t)
	addr := srv.Addr()

	t.Run("MutexOrder", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		holder := connect(t, addr)
		h := must[*recipes.Held](t)(recipes.NewMutex(holder, dir).Lock(ctx))

		// Three waiters queue one after the other; they must get the lock
		// in that order.
		const n = 3
		got := make(chan int, n)
		helds := make(chan *recipes.Held, n)
		for i := range n {
			c := connect(t, addr)
			go func() {
				h, err := recipes.NewMutex(c, dir).Lock(ctx)
				if err != nil {
					t.Errorf("waiter %d: %v", i, err)
					return
				}
				got <- i
				helds <- h
			}()
			waitChildren(t, holder, dir, i+2) // queued before the next starts
		}
		ok(t, h.Release(ctx))
		if err := h.Err(); !errors.Is(err, recipes.ErrReleased) {
			t.Fatalf("Err after Release = %v", err)
		}
		closedWithin(t, h.Lost(), "Lost after Release")
		for want := range n {
			select {
			case i := <-got:
				if i != want {
					t.Fatalf("waiter %d got the lock, want waiter %d", i, want)
				}
				w := <-helds
				notClosed(t, w.Lost(), "holder's Lost")
				ok(t, w.Release(ctx))
			case <-time.After(waitLimit):
				t.Fatalf("waiter %d never got the lock", want)
			}
		}
		waitChildren(t, holder, dir, 0)
	})

	t.Run("MutexCancel", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		a, b := connect(t, addr), connect(t, addr)
		h := must[*recipes.Held](t)(recipes.NewMutex(a, dir).Lock(ctx))
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := recipes.NewMutex(b, dir).Lock(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock while held = %v, want deadline exceeded", err)
		}
		// The abandoned request is withdrawn: only the holder's node is
		// left, and b gets the lock once a releases.
		waitChildren(t, a, dir, 1)
		ok(t, h.Release(ctx))
		h2 := must[*recipes.Held](t)(recipes.NewMutex(b, dir).Lock(ctx))
		ok(t, h2.Release(ctx))
	})

	t.Run("MutexNodeDeleted", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		a, b := connect(t, addr), connect(t, addr)
		h := must[*recipes.Held](t)(recipes.NewMutex(a, dir).Lock(ctx))
		ok(t, b.Delete(ctx, h.Path(), -1)) // an operator breaks the lock
		closedWithin(t, h.Lost(), "Lost after the node's deletion")
		if err := h.Err(); !errors.Is(err, recipes.ErrNodeDeleted) {
			t.Fatalf("Err = %v, want ErrNodeDeleted", err)
		}
		ok(t, h.Release(ctx))
	})

	t.Run("MutexCloseReleases", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		a, closeA, err := dial(t, addr, "a")
		ok(t, err)
		defer closeA()
		b := connect(t, addr)
		h := must[*recipes.Held](t)(recipes.NewMutex(a, dir).Lock(ctx))
		done := make(chan *recipes.Held, 1)
		go func() {
			h2, err := recipes.NewMutex(b, dir).Lock(ctx)
			if err != nil {
				t.Errorf("b: %v", err)
			}
			done <- h2
		}()
		waitChildren(t, b, dir, 2)
		closeA()
		closedWithin(t, h.Lost(), "Lost after Close")
		// Closing deletes the ephemeral node before the session ends, so
		// the watch may report either.
		if err := h.Err(); !errors.Is(err, client.ErrClosed) && !errors.Is(err, recipes.ErrNodeDeleted) {
			t.Fatalf("Err after Close = %v", err)
		}
		select {
		case h2 := <-done:
			if h2 != nil {
				ok(t, h2.Release(ctx))
			}
		case <-time.After(waitLimit):
			t.Fatal("b did not get the lock after a's session closed")
		}
	})

	t.Run("SimpleLock", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		p := root(t) + "/sub/lock"
		const n = 4
		var (
			inside atomic32
			wg     sync.WaitGroup
		)
		for i := range n {
			c := connect(t, addr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					h, err := recipes.NewSimpleLock(c, p).Lock(ctx)
					if err != nil {
						t.Errorf("client %d: %v", i, err)
						return
					}
					if v := inside.add(1); v != 1 {
						t.Errorf("client %d entered with %d inside", i, v-1)
					}
					time.Sleep(2 * time.Millisecond)
					inside.add(-1)
					if err := h.Release(ctx); err != nil {
						t.Errorf("client %d release: %v", i, err)
					}
				}
			}()
		}
		wg.Wait()
		a := connect(t, addr)
		if st, err := a.Exists(ctx, p); err != nil || st != nil {
			t.Fatalf("lock node after all released: %v %v", st, err)
		}
		// Cancellation while waiting leaves the holder's node alone.
		h := must[*recipes.Held](t)(recipes.NewSimpleLock(a, p).Lock(ctx))
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := recipes.NewSimpleLock(connect(t, addr), p).Lock(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock while held = %v", err)
		}
		if st, err := a.Exists(ctx, p); err != nil || st == nil || st.EphemeralOwner != a.SessionID() {
			t.Fatalf("holder's node after a waiter gave up: %+v %v", st, err)
		}
		ok(t, h.Release(ctx))
	})

	t.Run("RWMutex", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		r1c, r2c, wc, r3c := connect(t, addr), connect(t, addr), connect(t, addr), connect(t, addr)
		// Two readers share the lock.
		r1 := must[*recipes.Held](t)(recipes.NewRWMutex(r1c, dir).RLock(ctx))
		r2 := must[*recipes.Held](t)(recipes.NewRWMutex(r2c, dir).RLock(ctx))
		// A writer queues behind them; a reader after the writer waits
		// for the writer.
		wch := make(chan *recipes.Held, 1)
		go func() {
			h, err := recipes.NewRWMutex(wc, dir).Lock(ctx)
			if err != nil {
				t.Errorf("writer: %v", err)
			}
			wch <- h
		}()
		waitChildren(t, r1c, dir, 3)
		r3ch := make(chan *recipes.Held, 1)
		go func() {
			h, err := recipes.NewRWMutex(r3c, dir).RLock(ctx)
			if err != nil {
				t.Errorf("late reader: %v", err)
			}
			r3ch <- h
		}()
		waitChildren(t, r1c, dir, 4)
		ok(t, r1.Release(ctx))
		// The writer still waits for r2 and the late reader for the
		// writer: both queued, neither acquired. Their nodes are in the
		// listing, so a wrong acquisition would already be on its way;
		// release r2 and check the order of what follows.
		select {
		case <-wch:
			t.Fatal("writer acquired while a reader held the lock")
		case <-r3ch:
			t.Fatal("late reader acquired ahead of the queued writer")
		default:
		}
		ok(t, r2.Release(ctx))
		var w *recipes.Held
		select {
		case w = <-wch:
		case <-r3ch:
			t.Fatal("late reader acquired ahead of the writer")
		case <-time.After(waitLimit):
			t.Fatal("writer never acquired")
		}
		select {
		case <-r3ch:
			t.Fatal("late reader acquired while the writer held the lock")
		default:
		}
		ok(t, w.Release(ctx))
		select {
		case r3 := <-r3ch:
			ok(t, r3.Release(ctx))
		case <-time.After(waitLimit):
			t.Fatal("late reader never acquired")
		}
	})

	t.Run("Election", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		obs := connect(t, addr)
		e := recipes.NewElection(obs, dir)
		if _, err := e.Leader(ctx); !errors.Is(err, recipes.ErrNoLeader) {
			t.Fatalf("Leader before any candidate = %v", err)
		}
		octx, ocancel := context.WithCancel(ctx)
		defer ocancel()
		changes := e.Observe(octx)
		if l := nextLeader(t, changes); l.Node != "" {
			t.Fatalf("first observation %+v, want no leader", l)
		}
		const n = 3
		helds := make([]*recipes.Held, n)
		won := make(chan int, n)
		for i := range n {
			c := connect(t, addr)
			go func() {
				h, err := recipes.NewElection(c, dir).Campaign(ctx, fmt.Appendf(nil, "cand-%d", i))
				if err != nil {
					t.Errorf("candidate %d: %v", i, err)
					return
				}
				helds[i] = h
				won <- i
			}()
			waitChildren(t, obs, dir, i+1)
		}
		for want := range n {
			var i int
			select {
			case i = <-won:
			case <-time.After(waitLimit):
				t.Fatalf("no leader %d", want)
			}
			if i != want {
				t.Fatalf("candidate %d leads, want %d", i, want)
			}
			l := nextLeader(t, changes)
			for k := 0; l.Node != base(helds[i].Path()); k++ { // observers may see intermediate states
				if k > 100 {
					t.Fatalf("observer never saw candidate %d lead", i)
				}
				l = nextLeader(t, changes)
			}
			if string(l.Data) != fmt.Sprintf("cand-%d", i) {
				t.Fatalf("observed leader data %q", l.Data)
			}
			cur := must[recipes.Leader](t)(e.Leader(ctx))
			if cur.Node != l.Node {
				t.Fatalf("Leader() = %+v, observed %+v", cur, l)
			}
			ok(t, helds[i].Release(ctx))
		}
		for k, l := 0, nextLeader(t, changes); l.Node != ""; k, l = k+1, nextLeader(t, changes) {
			if k > 100 {
				t.Fatal("observer never saw the election empty")
			}
		}
		ocancel()
		for range changes { // closed once ctx ends
		}
	})

	t.Run("ElectionRun", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		c, other := connect(t, addr), connect(t, addr)
		e := recipes.NewElection(c, dir)
		var node string
		err := e.Run(ctx, []byte("me"), func(lctx context.Context) error {
			l := must[recipes.Leader](t)(e.Leader(ctx))
			node = l.Node
			// Someone deletes our node: the leadership is lost and lctx
			// ends.
			ok(t, other.Delete(ctx, dir+"/"+node, -1))
			select {
			case <-lctx.Done():
				return errors.New("deposed")
			case <-time.After(waitLimit):
				return errors.New("leadership context not canceled")
			}
		})
		if err == nil || err.Error() != "deposed" {
			t.Fatalf("Run = %v", err)
		}
		waitChildren(t, other, dir, 0)
	})
}

func nextLeader(t *testing.T, ch <-chan recipes.Leader) recipes.Leader {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatal("Observe channel closed")
		}
		return l
	case <-time.After(waitLimit):
		t.Fatal("no leader change observed")
	}
	return recipes.Leader{}
}

// waitChildren polls until dir has n children (a missing dir has 0).
func waitChildren(t *testing.T, c *client.Conn, dir string, n int) {
	t.Helper()
	var kids []string
	if !testutil.Within(waitLimit, func() bool {
		var err error
		kids, err = c.Children(context.Background(), dir)
		if err != nil && !isNoNode(err) {
			t.Fatalf("children of %s: %v", dir, err)
		}
		return len(kids) == n
	}) {
		t.Fatalf("%s has children %v, want %d", dir, kids, n)
	}
}

func base(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
