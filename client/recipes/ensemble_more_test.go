package recipes_test

import (
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
	"github.com/corral-db/corral/tests/harness"
)

// The recipes TestEnsembleRecipes leaves out, on the same 3-server
// ensemble under the same kill schedule (ensFaults): the read/write lock,
// the double barrier, rendezvous, configuration and group membership.

// ensBarrierSize is the number of processes of each barrier round.
const ensBarrierSize = 3

// TestEnsembleMoreRecipes runs the workloads below against a 3-server
// ensemble whose leader and followers are killed with SIGKILL and
// restarted (ensFaults, one member down at a time). It checks:
//   - RWMutex: a writer is alone inside, readers only without a writer
//     (rwCheck; readers may share);
//   - DoubleBarrier, in rounds of ensBarrierSize processes on a fresh
//     barrier node each: nobody returns from Enter before all have called
//     it, and (in a round where no process's session ended, which would
//     count as that process leaving) nobody returns from Leave before all
//     have called it;
//   - Rendezvous, in rounds: every worker awaiting a node not yet created
//     gets exactly what the master published, then its watch fires on the
//     master's second publication and it reads that one;
//   - Config: readers see whole configurations only, never an older one
//     than they saw;
//   - Group: a member lists itself with its data once Join returns, and
//     not once Release returns (through its own session); an observer
//     never lists a member that is not one of the workers;
//   - liveness: every workload progresses after each kill and restart;
//     once every session is closed, the ephemeral nodes go;
//   - replication: every member, after a sync, holds the same nodes.
func TestEnsembleMoreRecipes(t *testing.T) {
	// An ensemble of its own (see TestEnsembleRecipes).
	t.Parallel()
	ens := env.StartEnsemble(t, 3, harness.EnsembleConfig{TickTime: time.Second, InitLimit: 10, SyncLimit: 5})
	servers := ens.ConnectString()
	begin := time.Now()
	logf := func(format string, args ...any) {
		t.Helper()
		t.Logf("[%5.1fs] %s", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	logf("ensemble up at %s, leader %s", servers, ens.MemberString(ens.WaitAll()))

	ctx, cancel := context.WithTimeout(context.Background(), ensTestLimit)
	defer cancel()
	dir := root(t)
	wctx, stopWork := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stopWork()
		wg.Wait()
	}()

	ctl := connectEnsemble(t, servers)
	for _, p := range []string{dir, dir + "/barrier", dir + "/rendezvous"} {
		if _, err := ctl.Create(ctx, p, nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil && !isNodeExists(err) {
			t.Fatalf("create %s: %v", p, err)
		}
	}

	newSession := func(name string) *ensSession {
		return &ensSession{t: t, servers: servers, name: name}
	}
	spawn := func(name string, n int, work func(i int, s *ensSession)) {
		for i := range n {
			s := newSession(fmt.Sprintf("%s%d", name, i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.close()
				work(i, s)
			}()
		}
	}

	// RWMutex: one writer, two that mostly read.
	rw := &rwCheck{t: t}
	spawn("rw", 3, func(i int, s *ensSession) {
		for n := range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			write := i == 0 || n%4 == 0
			l := recipes.NewRWMutex(c, dir+"/rw")
			var h *recipes.Held
			if write {
				h, err = l.Lock(wctx)
			} else {
				h, err = l.RLock(wctx)
			}
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
				continue
			}
			rw.critical(write, h)
			ensRelease(h)
		}
	})

	// DoubleBarrier rounds, run by one goroutine that starts the
	// processes of each round.
	var barrierRounds, barrierVoid atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		procs := make([]*ensSession, ensBarrierSize)
		for i := range procs {
			procs[i] = newSession(fmt.Sprintf("barrier%d", i))
		}
		defer func() {
			for _, s := range procs {
				s.close()
			}
		}()
		for r := range ensMaxIters {
			if wctx.Err() != nil {
				return
			}
			switch ensBarrierRound(t, wctx, procs, fmt.Sprintf("%s/barrier/r%d", dir, r)) {
			case roundDone:
				barrierRounds.Add(1)
			case roundVoid:
				barrierVoid.Add(1)
			}
		}
	}()

	// Rendezvous rounds: a launcher creates the node, a master publishes
	// twice, two workers await.
	var rzRounds atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		launcher, master := newSession("launcher"), newSession("master")
		workers := []*ensSession{newSession("worker0"), newSession("worker1")}
		defer func() {
			for _, s := range append([]*ensSession{launcher, master}, workers...) {
				s.close()
			}
		}()
		for r := range ensMaxIters {
			if wctx.Err() != nil {
				return
			}
			if ensRendezvousRound(t, wctx, launcher, master, workers, fmt.Sprintf("%s/rendezvous/r%d", dir, r)) {
				rzRounds.Add(1)
			}
		}
	}()

	// Config: one publisher, readers that must only ever see a whole
	// configuration, never older than one they saw.
	const cfgKeys = 5
	var cfgViews atomic.Int64
	spawn("publisher", 1, func(_ int, s *ensSession) {
		for n := range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			m := make(map[string][]byte, cfgKeys)
			for k := range cfgKeys {
				m[fmt.Sprintf("k%d", k)] = fmt.Appendf(nil, "%d", n)
			}
			if err := recipes.NewConfig(c, dir+"/config").Publish(wctx, m); err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	spawn("reader", 2, func(i int, s *ensSession) {
		var last int64
		for range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			v, err := recipes.NewConfig(c, dir+"/config").Read(wctx)
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
				continue
			}
			cfgViews.Add(1)
			if len(v.Values) != cfgKeys {
				t.Errorf("%s: partial configuration %q", s.name, v.Values)
			}
			for k := range cfgKeys {
				if val := string(v.Values[fmt.Sprintf("k%d", k)]); val != string(v.Values["k0"]) {
					t.Errorf("%s: mixed configuration %q", s.name, v.Values)
					break
				}
			}
			if v.Version < last {
				t.Errorf("%s: configuration version went back from %d to %d", s.name, last, v.Version)
			}
			last = v.Version
			select { // wait for the next change, but not forever
			case <-v.Changed:
			case <-time.After(50 * time.Millisecond):
			case <-wctx.Done():
				return
			}
		}
	})

	// Group: members join and leave under fixed names; an observer
	// follows the membership.
	const groupSize = 3
	var joins, listings atomic.Int64
	spawn("member", groupSize, func(i int, s *ensSession) {
		name := fmt.Sprintf("m%d", i)
		for n := range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			g := recipes.NewGroup(c, dir+"/group")
			data := fmt.Sprintf("%s-%d", name, n)
			h, err := g.Join(wctx, name, []byte(data))
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
				continue
			}
			joins.Add(1)
			ms, _, err := g.Members(wctx)
			select {
			case <-h.Lost(): // the node went (the session ended): nothing to check
			default:
				switch {
				case err == nil && !slices.ContainsFunc(ms, func(m recipes.Member) bool { return m.Name == name && string(m.Data) == data }):
					t.Errorf("%s: joined as %s with %q, yet lists %v", s.name, name, data, memberStrings(ms))
				case err != nil && wctx.Err() == nil:
					s.unexpected(err)
				}
			}
			time.Sleep(time.Duration(i*20) * time.Millisecond)
			rctx, rcancel := context.WithTimeout(wctx, ensSessionTimeout)
			err = h.Release(rctx)
			rcancel()
			if err != nil {
				if wctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
					s.unexpected(err)
				}
				continue
			}
			if ms, _, err := g.Members(wctx); err == nil && slices.ContainsFunc(ms, func(m recipes.Member) bool { return m.Name == name }) {
				t.Errorf("%s: released %s, yet lists %v", s.name, name, memberStrings(ms))
			} else if err != nil && wctx.Err() == nil {
				s.unexpected(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	spawn("groupobserver", 1, func(_ int, s *ensSession) {
		for range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			ms, ch, err := recipes.NewGroup(c, dir+"/group").Members(wctx)
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				if !isNoNode(err) { // before the first Join made the group
					s.unexpected(err)
				}
				time.Sleep(20 * time.Millisecond)
				continue
			}
			listings.Add(1)
			for _, m := range ms {
				if !strings.HasPrefix(string(m.Data), m.Name+"-") || len(m.Name) != 2 || m.Name[0] != 'm' {
					t.Errorf("%s: a member no worker made: %s=%q", s.name, m.Name, m.Data)
				}
			}
			select {
			case <-ch:
			case <-time.After(50 * time.Millisecond):
			case <-wctx.Done():
				return
			}
		}
	})

	names := []string{"rwmutex", "barrier", "rendezvous", "config", "group"}
	progress := func() []int64 {
		return []int64{rw.holds.Load(), barrierRounds.Load(), rzRounds.Load(), cfgViews.Load(), joins.Load()}
	}
	waitProgress := func(after string) {
		t.Helper()
		base := progress()
		var now []int64
		stuck := ""
		if !testutil.Within(waitLimit, func() bool {
			now, stuck = progress(), ""
			for i := range now {
				if now[i] <= base[i]+2 {
					stuck = names[i]
				}
			}
			return stuck == ""
		}) {
			t.Errorf("no progress on %s within %s after %s (before %v, now %v)", stuck, waitLimit, after, base, now)
		}
	}

	waitProgress("start")
	logf("workloads running: %v %v", names, progress())
	for k, role := range ensFaults {
		leader := ens.WaitQuorum()
		victim := leader
		if role == "follower" {
			fs := ens.Followers(leader)
			victim = fs[k%len(fs)]
		}
		logf("kill -9 %s %s", role, ens.MemberString(victim))
		ens.Server(victim).Kill()
		logf("quorum again, leader %s", ens.MemberString(ens.WaitQuorum()))
		waitProgress("the kill of the " + role)
		logf("progress %v; restart %s", progress(), ens.MemberString(victim))
		ens.Server(victim).StartAgain()
		ens.WaitAll()
		logf("%s serves as %s", ens.MemberString(victim), ens.Mode(victim))
		waitProgress("the restart of the " + role)
		logf("progress %v", progress())
	}
	stopWork()
	wg.Wait()
	logf("workers stopped")
	ens.WaitAll()

	c := connectEnsemble(t, servers)
	waitNoChildren(t, ctx, c, dir+"/rw")
	waitNoChildren(t, ctx, c, dir+"/group")
	// A barrier round's ready node stays; its process nodes go.
	for _, r := range must[[]string](t)(c.Children(ctx, dir+"/barrier")) {
		waitNoChildrenBut(t, ctx, c, dir+"/barrier/"+r, "ready")
	}
	sameTreeOnEveryMember(t, ctx, ens, dir)
	logf("holds: rw %d; barrier rounds %d (void %d); rendezvous rounds %d; config views %d; group joins %d, listings %d",
		rw.holds.Load(), barrierRounds.Load(), barrierVoid.Load(), rzRounds.Load(), cfgViews.Load(), joins.Load(), listings.Load())
}

type roundOutcome int

const (
	roundDone roundOutcome = iota
	// roundVoid: a process's session ended, or the work stopped.
	roundVoid
)

// ensBarrierRound runs procs through the double barrier b once, each on
// its own session (renewed if it expired), and checks the barrier's
// promises. A process whose session ends counts, for the others, as
// having left: a round in which that happened checks Enter only.
func ensBarrierRound(t *testing.T, wctx context.Context, procs []*ensSession, b string) roundOutcome {
	n := len(procs)
	rctx, cancel := context.WithTimeout(wctx, 2*waitLimit)
	defer cancel()
	var entering, leaving atomic.Int32
	var void atomic.Bool
	var mu sync.Mutex
	var early []string // Leave violations, reported if the round is clean
	var wg sync.WaitGroup
	for i, s := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(what string, err error) {
				void.Store(true)
				cancel() // the others would wait for this process forever
				if wctx.Err() == nil && !errors.Is(err, context.Canceled) {
					s.unexpected(fmt.Errorf("%s %s: %w", what, b, err))
				}
			}
			c, err := s.conn(rctx)
			if err != nil {
				fail("connect", err)
				return
			}
			sid := c.SessionID()
			time.Sleep(time.Duration(i*10) * time.Millisecond) // staggered arrivals
			db := recipes.NewDoubleBarrier(c, b, fmt.Sprintf("proc%d", i), n)
			entering.Add(1)
			if err := db.Enter(rctx); err != nil {
				fail("Enter", err)
				return
			}
			if e := entering.Load(); e != int32(n) {
				t.Errorf("%s: %s through Enter with only %d of %d arrived", b, s.name, e, n)
			}
			time.Sleep(time.Duration((n-i)*10) * time.Millisecond) // staggered departures
			leaving.Add(1)
			if err := db.Leave(rctx); err != nil {
				fail("Leave", err)
				return
			}
			if l := leaving.Load(); l != int32(n) {
				mu.Lock()
				early = append(early, fmt.Sprintf("%s through Leave with only %d of %d leaving", s.name, l, n))
				mu.Unlock()
			}
			if c.SessionID() != sid || c.State() == client.StateExpired {
				void.Store(true)
			}
		}()
	}
	wg.Wait()
	// A session that ended during the round took its process node with
	// it, so the others may have left before it called Leave.
	for _, s := range procs {
		if s.c == nil || s.c.State() == client.StateExpired || s.c.State() == client.StateClosed {
			void.Store(true)
		}
	}
	if void.Load() {
		if wctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			t.Errorf("%s: round not over within %s", b, 2*waitLimit)
		}
		return roundVoid
	}
	for _, e := range early {
		t.Errorf("%s: %s", b, e)
	}
	return roundDone
}

// ensRendezvousRound: the workers await the node p before it exists; the
// launcher creates it, the master publishes; each worker must get what
// was published, then see its watch fire on the master's second
// publication and read that. It reports whether the round completed.
func ensRendezvousRound(t *testing.T, wctx context.Context, launcher, master *ensSession, workers []*ensSession, p string) bool {
	rctx, cancel := context.WithTimeout(wctx, 2*waitLimit)
	defer cancel()
	first, second := []byte(p+" first"), []byte(p+" second")
	published := make(chan struct{})
	var wg sync.WaitGroup
	var done atomic.Int32
	for _, s := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.conn(rctx)
			if err != nil {
				return
			}
			rz := recipes.NewRendezvous(c, p)
			got, ch, err := rz.Await(rctx)
			if err != nil {
				if rctx.Err() == nil {
					s.unexpected(err)
				}
				return
			}
			if string(got) != string(first) && string(got) != string(second) {
				t.Errorf("%s: rendezvous %s gave %q, want %q", s.name, p, got, first)
				return
			}
			if string(got) == string(first) {
				select {
				case ev := <-ch:
					if ev.Type == client.EventNotWatching {
						return // the session ended
					}
					if ev.Type != client.EventNodeDataChanged {
						t.Errorf("%s: rendezvous %s watch: %+v", s.name, p, ev)
						return
					}
				case <-rctx.Done():
					if wctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
						t.Errorf("%s: rendezvous %s: no watch event on the second publication", s.name, p)
					}
					return
				}
			}
			// The event came before any read that sees the change: this
			// read sees it (or something later; there is nothing later).
			<-published
			data, err := ensGet(rctx, c, p)
			switch {
			case err != nil:
				if rctx.Err() == nil {
					s.unexpected(err)
				}
				return
			case string(data) != string(second):
				t.Errorf("%s: rendezvous %s after the watch fired: %q, want %q", s.name, p, data, second)
				return
			}
			done.Add(1)
		}()
	}
	func() {
		defer close(published)
		lc, err := launcher.conn(rctx)
		if err != nil {
			return
		}
		time.Sleep(5 * time.Millisecond) // the workers mostly await a node not there yet
		if err := recipes.NewRendezvous(lc, p).Create(rctx, false); err != nil {
			if rctx.Err() == nil {
				launcher.unexpected(err)
			}
			cancel()
			return
		}
		mc, err := master.conn(rctx)
		if err != nil {
			return
		}
		rz := recipes.NewRendezvous(mc, p)
		for _, info := range [][]byte{first, second} {
			if err := rz.Publish(rctx, info); err != nil {
				if rctx.Err() == nil {
					master.unexpected(err)
				}
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	wg.Wait()
	return int(done.Load()) == len(workers)
}

// ensGet reads p, retrying through connection loss (a member's death).
func ensGet(ctx context.Context, c *client.Conn, p string) ([]byte, error) {
	for range 1000 {
		data, _, err := c.Get(ctx, p)
		if !errors.Is(err, client.ErrConnectionLoss) || ctx.Err() != nil {
			return data, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, client.ErrConnectionLoss
}

func memberStrings(ms []recipes.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name + "=" + string(m.Data)
	}
	return out
}

// waitNoChildrenBut waits until p's only children are among keep.
func waitNoChildrenBut(t *testing.T, ctx context.Context, c *client.Conn, p string, keep ...string) {
	t.Helper()
	var kids []string
	var err error
	if !testutil.Within(waitLimit, func() bool {
		kids, err = c.Children(ctx, p)
		return err == nil && !slices.ContainsFunc(kids, func(k string) bool { return !slices.Contains(keep, k) })
	}) {
		t.Errorf("%s still has children %v (err %v) %s after every session ended", p, kids, err, waitLimit)
	}
}

// sameTreeOnEveryMember reads, through a client of each member alone
// after a sync, every node under dir with its data: every member must
// report the same.
func sameTreeOnEveryMember(t *testing.T, ctx context.Context, ens *harness.Ensemble, dir string) {
	t.Helper()
	var views []string
	for i := range ens.Len() {
		c, closeFn, err := dial(t, ens.Server(i).Addr(), ens.MemberString(i), client.SessionTimeout(ensSessionTimeout))
		if err != nil {
			t.Errorf("connect to %s: %v", ens.MemberString(i), err)
			continue
		}
		func() {
			defer closeFn()
			if _, err := c.Sync(ctx, dir); err != nil {
				t.Errorf("sync on %s: %v", ens.MemberString(i), err)
				return
			}
			var b strings.Builder
			n := 0
			if err := dumpTree(ctx, c, dir, &b, &n); err != nil {
				t.Errorf("read the tree on %s: %v", ens.MemberString(i), err)
				return
			}
			views = append(views, b.String())
		}()
	}
	for i := 1; i < len(views); i++ {
		if views[i] != views[0] {
			t.Errorf("members disagree after sync:\n%s\n%s", views[0], views[i])
		}
	}
}

// dumpTree writes p, its data and version, and its subtree, sorted, at
// most 100000 nodes.
func dumpTree(ctx context.Context, c *client.Conn, p string, b *strings.Builder, n *int) error {
	if *n++; *n > 100000 {
		return errors.New("tree too large")
	}
	data, st, err := c.Get(ctx, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "%s %q v%d c%d\n", p, data, st.Version, st.Cversion)
	kids, err := c.Children(ctx, p)
	if err != nil {
		return err
	}
	slices.Sort(kids)
	for _, k := range kids {
		if err := dumpTree(ctx, c, p+"/"+k, b, n); err != nil {
			return err
		}
	}
	return nil
}
