package recipes_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/client/recipes"
	"github.com/corral-db/corral/internal/testutil"
)

var open = client.WorldACL(client.PermAll)

// TestCoordination covers configuration, rendezvous, group membership,
// the double barrier, the queue and the counter on one server, without
// faults.
func TestCoordination(t *testing.T) {
	srv := start(t)
	addr := srv.Addr()

	t.Run("Config", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		w, r := connect(t, addr), connect(t, addr)
		cfgW, cfgR := recipes.NewConfig(w, dir), recipes.NewConfig(r, dir)

		// Nothing published: a reader waits.
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := cfgR.Read(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Read before any publication = %v", err)
		}
		ok(t, cfgW.Publish(ctx, map[string][]byte{"a": []byte("1"), "b": []byte("1")}))
		v1 := must[*recipes.ConfigView](t)(cfgR.Read(ctx))
		wantValues(t, v1, map[string]string{"a": "1", "b": "1"})

		ok(t, cfgW.Publish(ctx, map[string][]byte{"a": []byte("2"), "c": []byte("2")}))
		select {
		case <-v1.Changed:
		case <-time.After(waitLimit):
			t.Fatal("view not invalidated by a new publication")
		}
		v2 := must[*recipes.ConfigView](t)(cfgR.Read(ctx))
		wantValues(t, v2, map[string]string{"a": "2", "c": "2"})
		if v2.Version <= v1.Version {
			t.Fatalf("versions %d then %d", v1.Version, v2.Version)
		}

		// A writer that dies half way: ready deleted, one entry changed,
		// ready never recreated. Nobody may use the partial state.
		ok(t, w.Delete(ctx, dir+"/ready", -1))
		must[client.Stat](t)(w.Set(ctx, dir+"/entries/a", []byte("3"), -1))
		select {
		case <-v2.Changed:
		case <-time.After(waitLimit):
			t.Fatal("view not invalidated by the ready node's deletion")
		}
		short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
		v, err := cfgR.Read(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Read of a partial configuration = %+v, %v", v, err)
		}
		ok(t, cfgW.Publish(ctx, map[string][]byte{"a": []byte("4"), "c": []byte("4")}))
		wantValues(t, must[*recipes.ConfigView](t)(cfgR.Read(ctx)), map[string]string{"a": "4", "c": "4"})
	})

	t.Run("ConfigConsistent", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		w := connect(t, addr)
		cfgW := recipes.NewConfig(w, dir)
		const keys, versions, readers = 8, 30, 3
		publish := func(n int) {
			m := make(map[string][]byte, keys)
			for k := range keys {
				m[fmt.Sprintf("k%d", k)] = fmt.Appendf(nil, "v%d", n)
			}
			ok(t, cfgW.Publish(ctx, m))
		}
		publish(0)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var views atomic.Int64
		for i := range readers {
			c := connect(t, addr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				cfg := recipes.NewConfig(c, dir)
				var lastVersion int64
				for range 10000 {
					select {
					case <-stop:
						return
					default:
					}
					v, err := cfg.Read(ctx)
					if err != nil {
						t.Errorf("reader %d: %v", i, err)
						return
					}
					views.Add(1)
					if len(v.Values) != keys {
						t.Errorf("reader %d: view with %d keys", i, len(v.Values))
					}
					var first []byte
					for _, val := range v.Values {
						if first == nil {
							first = val
						} else if !bytes.Equal(val, first) {
							t.Errorf("reader %d: mixed configuration %q", i, v.Values)
							return
						}
					}
					if v.Version < lastVersion {
						t.Errorf("reader %d: version went back %d -> %d", i, lastVersion, v.Version)
					}
					lastVersion = v.Version
				}
			}()
		}
		for n := 1; n <= versions; n++ {
			publish(n)
		}
		close(stop)
		wg.Wait()
		if views.Load() == 0 {
			t.Fatal("readers saw nothing")
		}
		// Watch delivers the latest.
		wctx, wcancel := context.WithCancel(ctx)
		defer wcancel()
		ch := recipes.NewConfig(connect(t, addr), dir).Watch(wctx)
		v := <-ch
		if string(v.Values["k0"]) != fmt.Sprintf("v%d", versions) {
			t.Fatalf("Watch's first view %q", v.Values)
		}
		publish(versions + 1)
		for k := 0; ; k++ {
			if k > 100 {
				t.Fatal("Watch never delivered the new configuration")
			}
			select {
			case v = <-ch:
			case <-time.After(waitLimit):
				t.Fatal("Watch did not deliver the new configuration")
			}
			if string(v.Values["k0"]) == fmt.Sprintf("v%d", versions+1) {
				break
			}
		}
	})

	t.Run("Rendezvous", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		p := root(t)
		launcher, closeLauncher, err := dial(t, addr, "launcher")
		ok(t, err)
		defer closeLauncher()
		master, worker := connect(t, addr), connect(t, addr)

		// A worker that starts before the node exists waits too.
		got := make(chan []byte, 1)
		watch := make(chan (<-chan client.Event), 1)
		go func() {
			info, ch, err := recipes.NewRendezvous(worker, p).Await(ctx)
			if err != nil {
				t.Errorf("Await: %v", err)
			}
			got <- info
			watch <- ch
		}()
		ok(t, recipes.NewRendezvous(launcher, p).Create(ctx, true))
		select {
		case info := <-got:
			t.Fatalf("worker got %q before the master published", info)
		case <-time.After(100 * time.Millisecond):
		}
		ok(t, recipes.NewRendezvous(master, p).Publish(ctx, []byte("10.0.0.1:7000")))
		select {
		case info := <-got:
			if string(info) != "10.0.0.1:7000" {
				t.Fatalf("worker got %q", info)
			}
		case <-time.After(waitLimit):
			t.Fatal("worker never got the rendezvous")
		}
		// The launcher ends: the ephemeral rendezvous goes, and the
		// worker's watch tells it to clean up.
		ch := <-watch
		closeLauncher()
		select {
		case ev := <-ch:
			if ev.Type != client.EventNodeDeleted {
				t.Fatalf("worker's watch: %+v", ev)
			}
		case <-time.After(waitLimit):
			t.Fatal("worker not told of the launcher's end")
		}
	})

	t.Run("Group", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		obs := connect(t, addr)
		g := recipes.NewGroup(obs, dir)
		a, closeA, err := dial(t, addr, "a")
		ok(t, err)
		defer closeA()
		b := connect(t, addr)

		ha := must[*recipes.Held](t)(recipes.NewGroup(a, dir).Join(ctx, "alpha", []byte("a:1")))
		members, ch := must2(t)(g.Members(ctx))
		wantMembers(t, members, "alpha")
		hb := must[*recipes.Held](t)(recipes.NewGroup(b, dir).Join(ctx, "", []byte("b:1")))
		waitEvent(t, ch, client.EventNodeChildrenChanged)
		members, ch = must2(t)(g.Members(ctx))
		if len(members) != 2 || string(members[1].Data) != "b:1" || base(hb.Path()) != members[1].Name {
			t.Fatalf("members %+v (b at %s)", members, hb.Path())
		}
		// A name taken by another session is refused.
		if _, err := recipes.NewGroup(b, dir).Join(ctx, "alpha", nil); !isNodeExists(err) {
			t.Fatalf("Join with a taken name = %v", err)
		}
		// A member that ends leaves the group.
		closeA()
		closedWithin(t, ha.Lost(), "member's Lost after Close")
		waitEvent(t, ch, client.EventNodeChildrenChanged)
		members, _ = must2(t)(g.Members(ctx))
		wantMembers(t, members, base(hb.Path()))
		ok(t, hb.Release(ctx))
		members, _ = must2(t)(g.Members(ctx))
		wantMembers(t, members)
	})

	t.Run("DoubleBarrier", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		const n = 4
		runBarrier(t, ctx, addr, dir, n, nil)
	})

	t.Run("QueueFIFO", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		p, c := connect(t, addr), connect(t, addr)
		prod, cons := recipes.NewQueue(p, dir, ""), recipes.NewQueue(c, dir, "consumer")

		// Take waits for a Put.
		got := make(chan recipes.Item, 1)
		go func() {
			it, err := cons.Take(ctx)
			if err != nil {
				t.Errorf("Take: %v", err)
			}
			got <- it
		}()
		time.Sleep(50 * time.Millisecond)
		must[string](t)(prod.Put(ctx, []byte("first")))
		if it := <-got; string(it.Data) != "first" {
			t.Fatalf("Take = %+v", it)
		}
		const n = 50
		for i := range n {
			must[string](t)(prod.Put(ctx, fmt.Appendf(nil, "%d", i)))
		}
		if l := must[int](t)(cons.Len(ctx)); l != n {
			t.Fatalf("Len = %d, want %d", l, n)
		}
		for i := range n {
			it := must[recipes.Item](t)(cons.Take(ctx))
			if string(it.Data) != fmt.Sprint(i) {
				t.Fatalf("item %d = %q: not FIFO", i, it.Data)
			}
			ok(t, cons.Ack(ctx, it))
		}
		if kids := must[[]string](t)(c.Children(ctx, dir+"/claims")); len(kids) != 1 {
			t.Fatalf("claims left: %v (the first item's, never acknowledged)", kids)
		}
		if l := must[int](t)(cons.Len(ctx)); l != 0 {
			t.Fatalf("Len after draining = %d", l)
		}
	})

	t.Run("QueueRedelivers", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		c := connect(t, addr)
		q := recipes.NewQueue(c, dir, "c1")
		for _, d := range []string{"a", "b", "c"} {
			must[string](t)(q.Put(ctx, []byte(d)))
		}
		// c1 takes two items and acknowledges one; then it is gone (its
		// successor is a new Queue with the same ID, on another session).
		a := must[recipes.Item](t)(q.Take(ctx))
		b := must[recipes.Item](t)(q.Take(ctx))
		ok(t, q.Ack(ctx, a))
		// Another consumer never sees b.
		other := recipes.NewQueue(connect(t, addr), dir, "c2")
		if it := must[recipes.Item](t)(other.Take(ctx)); string(it.Data) != "c" {
			t.Fatalf("other consumer took %q", it.Data)
		}
		succ := recipes.NewQueue(connect(t, addr), dir, "c1")
		it := must[recipes.Item](t)(succ.Take(ctx))
		if it.Name != b.Name || string(it.Data) != "b" || it.Seq != b.Seq {
			t.Fatalf("successor took %+v, want %+v again", it, b)
		}
		ok(t, succ.Ack(ctx, it))
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		it, err := succ.Take(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Take on an empty queue = %+v, %v", it, err)
		}
		if kids := must[[]string](t)(c.Children(ctx, dir+"/claims")); len(kids) != 1 || !strings.HasPrefix(kids[0], "item-") {
			t.Fatalf("claims left: %v, want only c2's", kids)
		}
	})

	t.Run("QueueConcurrent", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		dir := root(t)
		const producers, consumers, perProducer = 2, 3, 40
		res := newQueueLog()
		var wg sync.WaitGroup
		for i := range producers {
			c := connect(t, addr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := recipes.NewQueue(c, dir, "")
				for n := range perProducer {
					data := fmt.Sprintf("p%d-%d", i, n)
					if _, err := q.Put(ctx, []byte(data)); err != nil {
						t.Errorf("Put: %v", err)
						return
					}
					res.put(data, true)
				}
			}()
		}
		cctx, ccancel := context.WithCancel(ctx)
		var cw sync.WaitGroup
		for i := range consumers {
			c := connect(t, addr)
			cw.Add(1)
			go func() {
				defer cw.Done()
				q := recipes.NewQueue(c, dir, fmt.Sprintf("c%d", i))
				for range producers * perProducer {
					it, err := q.Take(cctx)
					if err != nil {
						if cctx.Err() == nil {
							t.Errorf("Take: %v", err)
						}
						return
					}
					res.took(i, it)
					if err := q.Ack(cctx, it); err != nil && cctx.Err() == nil {
						t.Errorf("Ack: %v", err)
					}
				}
			}()
		}
		wg.Wait()
		// res.check reports what is missing if they are not all in.
		testutil.Within(waitLimit, func() bool { return res.count() >= producers*perProducer })
		ccancel()
		cw.Wait()
		res.check(t)
	})

	t.Run("Counter", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		p := root(t) + "/counter"
		const workers, per = 4, 25
		var (
			mu     sync.Mutex
			values []int64
			wg     sync.WaitGroup
		)
		for range workers {
			c := connect(t, addr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := recipes.NewCounter(c, p)
				for range per {
					v, err := k.Add(ctx, 1)
					if err != nil {
						t.Errorf("Add: %v", err)
						return
					}
					mu.Lock()
					values = append(values, v)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		slices.Sort(values)
		for i, v := range values {
			if v != int64(i+1) {
				t.Fatalf("Add results %v: not each of 1..%d once", values, workers*per)
			}
		}
		c := connect(t, addr)
		if v := must[int64](t)(recipes.NewCounter(c, p).Get(ctx)); v != workers*per {
			t.Fatalf("Get = %d", v)
		}
		if v := must[int64](t)(recipes.NewCounter(c, p).Add(ctx, -10)); v != workers*per-10 {
			t.Fatalf("Add(-10) = %d", v)
		}
		waitChildren(t, c, p, 0) // markers cleaned up
	})
}

func wantValues(t *testing.T, v *recipes.ConfigView, want map[string]string) {
	t.Helper()
	if len(v.Values) != len(want) {
		t.Fatalf("config %q, want %q", v.Values, want)
	}
	for k, w := range want {
		if string(v.Values[k]) != w {
			t.Fatalf("config %q, want %q", v.Values, want)
		}
	}
}

func wantMembers(t *testing.T, ms []recipes.Member, names ...string) {
	t.Helper()
	var got []string
	for _, m := range ms {
		got = append(got, m.Name)
	}
	if !slices.Equal(got, names) {
		t.Fatalf("members %v, want %v", got, names)
	}
}

func must2(t *testing.T) func([]recipes.Member, <-chan client.Event, error) ([]recipes.Member, <-chan client.Event) {
	return func(ms []recipes.Member, ch <-chan client.Event, err error) ([]recipes.Member, <-chan client.Event) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ms, ch
	}
}

func waitEvent(t *testing.T, ch <-chan client.Event, typ client.EventType) {
	t.Helper()
	select {
	case ev := <-ch:
		if ev.Type != typ {
			t.Fatalf("event %+v, want %v", ev, typ)
		}
	case <-time.After(waitLimit):
		t.Fatalf("no %v event", typ)
	}
}

// runBarrier runs n processes through one double barrier and checks that
// none leaves Enter before all n have called it, and none leaves Leave
// before all n have called it. during, if set, runs while every process
// is inside. opts are the processes' client options.
func runBarrier(t *testing.T, ctx context.Context, addr, dir string, n int, during func(), opts ...client.Option) {
	t.Helper()
	var entering, inside, leaving atomic.Int32
	var wg sync.WaitGroup
	allIn := make(chan struct{}, n)
	proceed := make(chan struct{})
	for i := range n {
		c := connect(t, addr, opts...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i*20) * time.Millisecond) // staggered arrivals
			b := recipes.NewDoubleBarrier(c, dir, fmt.Sprintf("proc%d", i), n)
			entering.Add(1)
			if err := b.Enter(ctx); err != nil {
				t.Errorf("process %d Enter: %v", i, err)
				return
			}
			if e := entering.Load(); e != int32(n) {
				t.Errorf("process %d entered with only %d of %d arrived", i, e, n)
			}
			inside.Add(1)
			allIn <- struct{}{}
			<-proceed
			time.Sleep(time.Duration((n-i)*20) * time.Millisecond) // staggered departures
			leaving.Add(1)
			if err := b.Leave(ctx); err != nil {
				t.Errorf("process %d Leave: %v", i, err)
				return
			}
			if l := leaving.Load(); l != int32(n) {
				t.Errorf("process %d left with only %d of %d done", i, l, n)
			}
		}()
	}
	for range n {
		select {
		case <-allIn:
		case <-time.After(waitLimit):
			close(proceed)
			t.Fatal("not every process got through Enter")
		}
	}
	if during != nil {
		during()
	}
	close(proceed)
	wg.Wait()
}

// queueLog records what a queue test put and took.
type queueLog struct {
	mu    sync.Mutex
	puts  map[string]bool // data -> Put returned nil (false: unknown outcome)
	taken map[string]int  // data -> times delivered
	unack map[string]bool // data -> an Ack failed: it may come again
	seqs  map[int][]int64 // consumer -> sequence numbers in delivery order
	order []recipes.Item
}

func newQueueLog() *queueLog {
	return &queueLog{puts: map[string]bool{}, taken: map[string]int{}, unack: map[string]bool{}, seqs: map[int][]int64{}}
}

func (l *queueLog) put(data string, sure bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.puts[data] {
		l.puts[data] = sure
	}
}

func (l *queueLog) took(consumer int, it recipes.Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.taken[string(it.Data)]++
	l.seqs[consumer] = append(l.seqs[consumer], it.Seq)
	l.order = append(l.order, it)
}

func (l *queueLog) ackFailed(it recipes.Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unack[string(it.Data)] = true
}

func (l *queueLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.order)
}

// check: every item put for sure was delivered, nothing was delivered
// twice (unless its Ack failed) or out of nowhere, every consumer received
// increasing sequence numbers, and each producer's items came out in the
// order it put them.
func (l *queueLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for data, sure := range l.puts {
		if sure && l.taken[data] == 0 {
			t.Errorf("item %q put but never delivered", data)
		}
	}
	for data, n := range l.taken {
		if n > 1 && !l.unack[data] {
			t.Errorf("item %q delivered %d times", data, n)
		}
		if _, ok := l.puts[data]; !ok {
			t.Errorf("item %q delivered but never put", data)
		}
	}
	for c, seqs := range l.seqs {
		// A repeat after a failed Ack comes again in its place; compare
		// first deliveries only.
		seen := map[int64]bool{}
		var firsts []int64
		for _, s := range seqs {
			if !seen[s] {
				seen[s] = true
				firsts = append(firsts, s)
			}
		}
		if !slices.IsSorted(firsts) {
			t.Errorf("consumer %d received sequence numbers out of order: %v", c, seqs)
		}
	}
	// Per producer: order of puts == order of sequence numbers.
	byProducer := map[int][][2]int64{} // producer -> (n, seq)
	once := map[string]bool{}
	for _, it := range l.order {
		if once[string(it.Data)] {
			continue
		}
		once[string(it.Data)] = true
		var p int
		var n int64
		if _, err := fmt.Sscanf(string(it.Data), "p%d-%d", &p, &n); err != nil {
			continue
		}
		byProducer[p] = append(byProducer[p], [2]int64{n, it.Seq})
	}
	for p, xs := range byProducer {
		slices.SortFunc(xs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
		for i := 1; i < len(xs); i++ {
			if xs[i][1] <= xs[i-1][1] {
				t.Errorf("producer %d: item %d has sequence %d after item %d's %d", p, xs[i][0], xs[i][1], xs[i-1][0], xs[i-1][1])
			}
		}
	}
}
