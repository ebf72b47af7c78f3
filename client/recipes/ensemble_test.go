package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/client/recipes"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// The recipes on a replicated ensemble (issue 5): the workloads of
// TestChaos whose safety can be checked from outside run against three
// servers, every client given the whole connect string, while the test
// SIGKILLs members one at a time and starts them again.

const (
	// ensSessionTimeout is what the ensemble's clients ask for (a 1 s
	// tick allows 2 to 20 s): longer than an election after a kill takes,
	// so a session usually moves to another member intact (the path worth
	// testing); one that expires anyway is replaced by its worker.
	ensSessionTimeout = 6 * time.Second
	// ensTestLimit is a hard bound on the whole test; nothing asserts on
	// how long any part took.
	ensTestLimit = 4 * time.Minute
	// ensMaxBacklog bounds the items put and not yet taken: a producer
	// waits while there are more, so the queue left to drain at the end
	// stays small whatever the speed of the machine, and the producers
	// never run out of items before the fault schedule ends.
	ensMaxBacklog = 100
	// ensMaxIters bounds every other worker loop (wctx bounds it in
	// time).
	ensMaxIters = 100000
)

// ensFaults is the kill schedule. Each step SIGKILLs the member in that
// role, waits until the two others serve and the workloads progress,
// starts it again, and waits until all three serve and the workloads
// progress: only one member is ever down. The follower killed is the one
// the long-holding mutex holder is connected to, if it is on a follower,
// so that the kill finds a holder inside whose session must move to
// another member.
var ensFaults = []string{"leader", "follower", "leader", "follower"}

// TestEnsembleRecipes runs the workloads below against a 3-server
// ensemble whose leader and followers are killed with SIGKILL and
// restarted (see ensFaults); then two long holders (mutex holder 0,
// election candidate 0) are cut off every member until the ensemble
// expires their sessions, and let back. It checks:
//   - Mutex and SimpleLock: at most one holder inside the critical
//     section at any time (an in-test counter that only the lock guards);
//   - Election: at most one candidate acting as leader at any time, where
//     a leader stops acting as one when its Held's Lost closes (by default
//     on a dropped connection, before the session can expire and let a
//     successor in: the recipe's documented semantics);
//   - Queue: every item whose Put returned nil is delivered, none twice
//     unless its Ack failed (the recipe's documented repeat), none that
//     was never put; each consumer receives increasing sequence numbers,
//     and each producer's items keep its order;
//   - Counter: no successful increment lost or applied twice;
//   - liveness: every workload makes progress after each kill, each
//     restart and the expiry; a client cut off past its session timeout
//     finds its session expired and starts a new one; once every session
//     is closed their ephemeral nodes go;
//   - replication: every member, after a sync, reports the same counter
//     value and the same queue contents.
func TestEnsembleRecipes(t *testing.T) {
	// An ensemble of its own: runs beside the other tests that start
	// their own servers and mostly wait on them.
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
	// Whatever ends the test (a Fatal in WaitQuorum included), the
	// workers stop before the servers are killed by the harness's cleanup
	// and before the test is over.
	defer func() {
		stopWork()
		wg.Wait()
	}()

	mutexJ := newJournal(t, "mutex")
	simpleJ := newJournal(t, "simple lock")
	electJ := newJournal(t, "election")
	qlog := newQueueLog()
	var counter counterLog
	var workers []*ensSession

	// Worker 0 of the gated workloads dials through a gate the test can
	// cut, and marks its session with an ephemeral presence node.
	ctl := connectEnsemble(t, servers)
	for _, p := range []string{dir, dir + "/presence"} {
		if _, err := ctl.Create(ctx, p, nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil && !isNodeExists(err) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	spawn := func(name string, n int, gated bool, work func(i int, s *ensSession)) *ensSession {
		var first *ensSession
		for i := range n {
			s := &ensSession{t: t, servers: servers, name: fmt.Sprintf("%s%d", name, i)}
			if gated && i == 0 {
				s.gate = newGate()
				s.presence = dir + "/presence/" + s.name
			}
			if i == 0 {
				first = s
			}
			workers = append(workers, s)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.close()
				work(i, s)
			}()
		}
		return first
	}

	// holdLoop acquires with lock, runs the critical section, releases.
	// Holder 0 holds long enough that a kill often finds someone inside.
	holdLoop := func(s *ensSession, j *journal, who int, lock func(c *client.Conn) (*recipes.Held, error)) {
		for range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			h, err := lock(c)
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
				continue
			}
			d := 3 * time.Millisecond
			if who == 0 {
				d = 400 * time.Millisecond
			}
			j.critical(who, h, d)
			ensRelease(h)
		}
	}

	holder := spawn("mutex", 3, true, func(i int, s *ensSession) {
		holdLoop(s, mutexJ, i, func(c *client.Conn) (*recipes.Held, error) {
			return recipes.NewMutex(c, dir+"/mutex").Lock(wctx)
		})
	})
	spawn("simple", 2, false, func(i int, s *ensSession) {
		holdLoop(s, simpleJ, i, func(c *client.Conn) (*recipes.Held, error) {
			return recipes.NewSimpleLock(c, dir+"/simple").Lock(wctx)
		})
	})
	candidate := spawn("candidate", 2, true, func(i int, s *ensSession) {
		holdLoop(s, electJ, i, func(c *client.Conn) (*recipes.Held, error) {
			return recipes.NewElection(c, dir+"/election").Campaign(wctx, fmt.Appendf(nil, "candidate %d", i))
		})
	})
	spawn("producer", 2, false, func(i int, s *ensSession) {
		for n := range ensMaxIters {
			for range 1000 {
				if qlog.backlog() < ensMaxBacklog || wctx.Err() != nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			data := fmt.Sprintf("p%d-%d", i, n)
			_, err = recipes.NewQueue(c, dir+"/queue", "").Put(wctx, []byte(data))
			qlog.put(data, err == nil) // on error the item may or may not be there
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	var unacked atomic.Int64
	spawn("consumer", 2, false, func(i int, s *ensSession) {
		var q *recipes.Queue
		var qc *client.Conn
		for range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			if c != qc { // a new session takes over the old one's claims
				q, qc = recipes.NewQueue(c, dir+"/queue", fmt.Sprintf("consumer%d", i)), c
			}
			it, err := q.Take(wctx)
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
				continue
			}
			qlog.took(i, it)
			// Acknowledged under the test's context, not the workers':
			// an item taken as the work stops is still acknowledged.
			actx, acancel := context.WithTimeout(ctx, 2*ensSessionTimeout)
			err = q.Ack(actx, it)
			acancel()
			if err != nil {
				// Allowed (the item may then come again), but with one
				// member down at a time the ensemble should answer.
				unacked.Add(1)
				qlog.ackFailed(it)
				if errors.Is(err, context.DeadlineExceeded) {
					t.Logf("%s: ack of %s: %v", s.name, it.Name, err)
				} else {
					s.unexpected(err)
				}
			}
		}
	})
	spawn("counter", 2, false, func(i int, s *ensSession) {
		for range ensMaxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			v, err := recipes.NewCounter(c, dir+"/counter").Add(wctx, 1)
			switch {
			case err == nil:
				counter.success(v)
			case wctx.Err() != nil && errors.Is(err, wctx.Err()):
				return // not applied: Add returns ctx's error only before its write
			default:
				counter.unknown()
				s.unexpected(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})

	names := []string{"mutex", "simple lock", "election", "queue", "counter"}
	progress := func() []int64 {
		return []int64{mutexJ.holds.Load(), simpleJ.holds.Load(), electJ.holds.Load(),
			int64(qlog.count()), counter.count()}
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
			for _, f := range fs {
				if ens.Server(f).Addr() == holder.server() {
					victim = f
				}
			}
		}
		logf("kill -9 %s %s (mutex holder 0 is on %s)", role, ens.MemberString(victim), holder.server())
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

	// Session expiry: mutex holder 0 and candidate 0 lose every member
	// (their gates close their connections and refuse new ones) until the
	// ensemble has expired their sessions, which their presence nodes'
	// deletion shows. Each must have stopped acting as holder when its
	// connection dropped, before the expiry let a successor in; the
	// journals check it. Let back, each finds its session expired and
	// starts a new one.
	cut := []*ensSession{holder, candidate}
	before := make([]int32, len(cut))
	for i, s := range cut {
		before[i] = s.sessions.Load()
		s.gate.Cut()
	}
	logf("cut %s and %s off the ensemble", holder.name, candidate.name)
	for _, s := range cut {
		waitNoNode(t, ctx, ctl, s.presence, "the session of "+s.name+" was cut off")
	}
	logf("their sessions expired")
	waitProgress("the expiry of two sessions")
	for _, s := range cut {
		s.gate.Heal()
	}
	for i, s := range cut {
		if !testutil.Within(waitLimit, func() bool { return s.sessions.Load() != before[i] }) {
			t.Errorf("%s: no new session within %s of its expiry", s.name, waitLimit)
		}
	}
	waitProgress("the expired clients' return")
	logf("progress %v", progress())
	stopWork()
	wg.Wait()
	logf("workers stopped")
	ens.WaitAll()

	// Drain the queue: each consumer's successor first delivers what its
	// predecessor had claimed, then everything left.
	for i := range 2 {
		c := connectEnsemble(t, servers)
		q := recipes.NewQueue(c, dir+"/queue", fmt.Sprintf("consumer%d", i))
		for range 10 * ensMaxBacklog {
			short, cancel := context.WithTimeout(ctx, time.Second)
			it, err := q.Take(short)
			cancel()
			if err != nil {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("drain: %v", err)
				}
				break
			}
			qlog.took(i, it)
			ok(t, q.Ack(ctx, it))
		}
	}
	logf("queue drained")

	c := connectEnsemble(t, servers)
	if n := must[int](t)(recipes.NewQueue(c, dir+"/queue", "").Len(ctx)); n != 0 {
		t.Errorf("%d items left after draining", n)
	}
	if claims, err := c.Children(ctx, dir+"/queue/claims"); err != nil || len(claims) != 0 {
		t.Errorf("claims left after draining: %v %v", claims, err)
	}
	qlog.check(t)
	counter.check(t, must[int64](t)(recipes.NewCounter(c, dir+"/counter").Get(ctx)))
	for _, j := range []*journal{mutexJ, simpleJ, electJ} {
		j.check()
	}

	// Every worker's session is closed (or expired): its ephemeral nodes
	// go (sameOnEveryMember then compares the members).
	for _, d := range []string{"/mutex", "/election", "/queue/puts", "/counter", "/presence"} {
		waitNoChildren(t, ctx, c, dir+d)
	}
	waitNoNode(t, ctx, c, dir+"/simple", "every session ended")
	sameOnEveryMember(t, ctx, ens, dir)

	renewed := 0
	for _, s := range workers {
		renewed += int(s.sessions.Load()) - 1
	}
	logf("holds: mutex %d (lost %d), simple %d (lost %d), election %d (lost %d); queue deliveries %d (failed acks %d); counter %d (unknown %d); sessions renewed after expiry %d",
		mutexJ.holds.Load(), mutexJ.lost.Load(), simpleJ.holds.Load(), simpleJ.lost.Load(),
		electJ.holds.Load(), electJ.lost.Load(), qlog.count(), unacked.Load(),
		counter.count(), counter.unknowns.Load(), renewed)
}

// backlog is the number of items put (or perhaps put) and not taken.
func (l *queueLog) backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.puts) - len(l.taken)
}

// ensRelease gives a hold up, bounded in time; it continues in the
// background if no member answers.
func ensRelease(h *recipes.Held) {
	ctx, cancel := context.WithTimeout(context.Background(), ensSessionTimeout)
	defer cancel()
	_ = h.Release(ctx)
}

// ensSession is a worker's client of the whole ensemble, replaced when
// its session ends.
type ensSession struct {
	t       *testing.T
	servers string // the connect string
	name    string
	c       *client.Conn
	closeFn func()
	// sessions counts the sessions opened: more than one means one
	// expired. Read by the test goroutine.
	sessions atomic.Int32
	// gate, if not nil, is the dialer: the test cuts the client off.
	gate *gate
	// presence, if not "", is an ephemeral node each session creates.
	presence string
	// cur is c, for the test goroutine to read.
	cur atomic.Pointer[client.Conn]
}

// server is the member the session is connected to, or was last ("" if
// none yet).
func (s *ensSession) server() string {
	if c := s.cur.Load(); c != nil {
		return c.Server()
	}
	return ""
}

// conn returns a live Conn, connecting anew if the session is over.
func (s *ensSession) conn(ctx context.Context) (*client.Conn, error) {
	if s.c != nil {
		switch s.c.State() {
		case client.StateExpired, client.StateClosed, client.StateAuthFailed:
			s.close()
		default:
			return s.c, nil
		}
	}
	for range 1000 {
		cctx, cancel := context.WithTimeout(ctx, waitLimit)
		opts := []client.Option{client.SessionTimeout(ensSessionTimeout)}
		if s.gate != nil {
			opts = append(opts, client.Dialer(s.gate.dial))
		}
		c, closeFn, err := dialCtx(cctx, s.t, s.servers, s.name, opts...)
		cancel()
		if err == nil {
			s.c, s.closeFn = c, closeFn
			s.cur.Store(c)
			s.sessions.Add(1)
			if s.presence != "" {
				s.markPresence(ctx, c)
			}
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, errors.New("could not connect")
}

// markPresence creates the session's presence node. After an expiry the
// old session's node may still be there for a moment: it waits for it to
// go.
func (s *ensSession) markPresence(ctx context.Context, c *client.Conn) {
	for range 1000 {
		_, err := c.Create(ctx, s.presence, nil, client.WorldACL(client.PermAll), client.ModeEphemeral)
		if isNodeExists(err) {
			st, serr := c.Exists(ctx, s.presence)
			if serr == nil && st != nil && st.EphemeralOwner == c.SessionID() {
				return // ours: the reply to our create was lost
			}
			err = serr
			if err == nil {
				err = client.ErrConnectionLoss // someone else's, or gone: try again
			}
		}
		switch {
		case err == nil:
			return
		case ctx.Err() != nil || errors.Is(err, client.ErrSessionExpired):
			return // the worker sees the session's end itself
		case !errors.Is(err, client.ErrConnectionLoss):
			s.t.Errorf("%s: presence node: %v", s.name, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Errorf("%s: presence node: gave up", s.name)
}

func (s *ensSession) close() {
	if s.c != nil {
		s.closeFn()
		s.c = nil
	}
}

// unexpected reports an error a recipe should not return: anything but
// the end of the session. Connection loss is the recipes' to ride out.
func (s *ensSession) unexpected(err error) {
	if errors.Is(err, client.ErrSessionExpired) || errors.Is(err, client.ErrClosed) {
		return
	}
	s.t.Errorf("%s: %v", s.name, err)
}

// connectEnsemble opens a client of the whole ensemble, closed when the
// test ends.
func connectEnsemble(t *testing.T, servers string) *client.Conn {
	t.Helper()
	c, closeFn, err := dial(t, servers, "client", client.SessionTimeout(ensSessionTimeout))
	if err != nil {
		t.Fatalf("Connect(%s): %v", servers, err)
	}
	t.Cleanup(closeFn)
	return c
}

// waitNoChildren waits until p has no children (or does not exist).
func waitNoChildren(t *testing.T, ctx context.Context, c *client.Conn, p string) {
	t.Helper()
	var kids []string
	var err error
	if !testutil.Within(waitLimit, func() bool {
		kids, err = c.Children(ctx, p)
		return isNoNode(err) || (err == nil && len(kids) == 0)
	}) {
		t.Errorf("%s still has children %v (err %v) %s after every session ended", p, kids, err, waitLimit)
	}
}

// waitNoNode waits until p does not exist, after what.
func waitNoNode(t *testing.T, ctx context.Context, c *client.Conn, p, what string) {
	t.Helper()
	var st *client.Stat
	var err error
	if !testutil.Within(waitLimit, func() bool {
		st, err = c.Exists(ctx, p)
		return err == nil && st == nil
	}) {
		t.Errorf("%s still exists (stat %+v, err %v) %s after %s", p, st, err, waitLimit, what)
	}
}

// sameOnEveryMember reads, through a client of each member alone after a
// sync, the counter and the queue's directories under dir: every member
// must report the same.
func sameOnEveryMember(t *testing.T, ctx context.Context, ens *harness.Ensemble, dir string) {
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
			v, err := recipes.NewCounter(c, dir+"/counter").Get(ctx)
			if err != nil {
				t.Errorf("counter on %s: %v", ens.MemberString(i), err)
				return
			}
			view := fmt.Sprintf("counter=%d", v)
			for _, d := range []string{"/queue", "/queue/claims", "/mutex", "/election"} {
				kids, err := c.Children(ctx, dir+d)
				if err != nil && !isNoNode(err) {
					t.Errorf("children of %s on %s: %v", d, ens.MemberString(i), err)
					return
				}
				slices.Sort(kids)
				view += fmt.Sprintf(" %s=%v", d, kids)
			}
			views = append(views, view)
		}()
	}
	for i := 1; i < len(views); i++ {
		if views[i] != views[0] {
			t.Errorf("members disagree after sync:\n%s\n%s", views[0], views[i])
		}
	}
}
