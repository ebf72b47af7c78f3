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
)

// TestChaos runs the lock, election, queue, counter and configuration
// workloads at once
// against one server that is killed with SIGKILL and started again on the
// same data directory, then frozen (SIGSTOP) for longer than the session
// timeout, which expires sessions. Invariants are checked throughout and
// at the end:
//   - Mutex, SimpleLock, Election: at most one holder at a time (an
//     in-test journal that only the lock guards);
//   - RWMutex: a writer alone, readers only without a writer;
//   - double barrier: nobody through Enter before all arrived, nobody
//     through Leave before all left, across a server restart;
//   - Queue: every item put is delivered exactly once, each consumer in
//     sequence order, each producer's items in the order it put them;
//   - Counter: no successful increment lost or doubled;
//   - Config: readers see whole configurations only, never going back;
//   - liveness: every workload makes progress after each fault.
func TestChaos(t *testing.T) {
	// A server of its own; runs beside TestPauseExpiry, which mostly
	// waits.
	t.Parallel()
	srv := start(t)
	addr := srv.Addr()
	ctx := testCtx(t)
	dir := root(t)
	wctx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var wg sync.WaitGroup

	mutexJ := newJournal(t, "mutex")
	simpleJ := newJournal(t, "simple lock")
	electJ := newJournal(t, "election")
	rw := &rwCheck{t: t}
	qlog := newQueueLog()
	var counter counterLog

	var workers []*session // for the report of a stuck workload
	spawn := func(name string, n int, work func(i int, s *session)) {
		for i := range n {
			s := &session{t: t, addr: addr, name: fmt.Sprintf("%s%d", name, i)}
			workers = append(workers, s)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.close()
				work(i, s)
			}()
		}
	}
	const maxIters = 100000 // with wctx, bounds every worker loop

	// holdLoop acquires with lock, runs the critical section, releases.
	holdLoop := func(s *session, j *journal, who int, lock func(c *client.Conn) (*recipes.Held, error)) {
		for range maxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			s.setPhase("lock")
			h, err := lock(c)
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
				continue
			}
			// Holder 0 holds longer than it takes to notice a frozen
			// server, so that faults find a holder inside.
			d := 3 * time.Millisecond
			if who == 0 {
				d = 3 * time.Second
			}
			s.setPhase("hold " + base(h.Path()))
			j.critical(who, h, d)
			s.setPhase("release " + base(h.Path()))
			release(h)
		}
	}

	spawn("mutex", 3, func(i int, s *session) {
		holdLoop(s, mutexJ, i, func(c *client.Conn) (*recipes.Held, error) {
			return recipes.NewMutex(c, dir+"/mutex").Lock(wctx)
		})
	})
	spawn("simple", 2, func(i int, s *session) {
		holdLoop(s, simpleJ, i, func(c *client.Conn) (*recipes.Held, error) {
			return recipes.NewSimpleLock(c, dir+"/simple").Lock(wctx)
		})
	})
	spawn("candidate", 2, func(i int, s *session) {
		holdLoop(s, electJ, i, func(c *client.Conn) (*recipes.Held, error) {
			return recipes.NewElection(c, dir+"/election").Campaign(wctx, fmt.Appendf(nil, "candidate %d", i))
		})
	})
	spawn("rw", 3, func(i int, s *session) {
		writer := i == 0
		for n := range maxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			l := recipes.NewRWMutex(c, dir+"/rw")
			var h *recipes.Held
			if writer || n%4 == 0 {
				s.setPhase("lock")
				h, err = l.Lock(wctx)
			} else {
				s.setPhase("rlock")
				h, err = l.RLock(wctx)
			}
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				s.unexpected(err)
				continue
			}
			s.setPhase("hold " + base(h.Path()))
			rw.critical(writer || n%4 == 0, h)
			s.setPhase("release " + base(h.Path()))
			release(h)
		}
	})
	spawn("producer", 2, func(i int, s *session) {
		for n := range maxIters {
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
			time.Sleep(2 * time.Millisecond)
		}
	})
	spawn("consumer", 2, func(i int, s *session) {
		var q *recipes.Queue
		var qc *client.Conn
		for range maxIters {
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
			if err := q.Ack(wctx, it); err != nil {
				qlog.ackFailed(it)
				if wctx.Err() == nil {
					s.unexpected(err)
				}
			}
		}
	})
	spawn("counter", 2, func(i int, s *session) {
		for range maxIters {
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
		}
	})

	// Configuration: one publisher, readers that must only ever see a
	// whole configuration, never older than one they saw.
	const cfgKeys = 5
	var cfgViews, observed atomic.Int64
	spawn("publisher", 1, func(_ int, s *session) {
		for n := range maxIters {
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
	spawn("reader", 2, func(i int, s *session) {
		var last int64
		for range maxIters {
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
			var first string
			for k := range cfgKeys {
				val := string(v.Values[fmt.Sprintf("k%d", k)])
				if k == 0 {
					first = val
				}
				if len(v.Values) != cfgKeys || val != first {
					t.Errorf("reader %d: partial configuration %q", i, v.Values)
					break
				}
			}
			if v.Version < last {
				t.Errorf("reader %d: configuration version went back from %d to %d", i, last, v.Version)
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
	// An election observer, renewed with its session.
	spawn("observer", 1, func(_ int, s *session) {
		for range maxIters {
			c, err := s.conn(wctx)
			if err != nil {
				return
			}
			for range recipes.NewElection(c, dir+"/election").Observe(wctx) {
				observed.Add(1)
			}
			if wctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // the session ended: renew it
		}
	})

	progress := func() []int64 {
		return []int64{mutexJ.holds.Load(), simpleJ.holds.Load(), electJ.holds.Load(),
			rw.holds.Load(), int64(qlog.count()), counter.count(), cfgViews.Load(), observed.Load()}
	}
	names := []string{"mutex", "simple lock", "election", "rwmutex", "queue", "counter", "config", "election observer"}
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
			reportStuck(t, ctx, addr, workers, dir+"/mutex", dir+"/simple", dir+"/election", dir+"/rw")
		}
	}

	waitProgress("start")
	// A barrier whose processes are inside while the server is killed
	// and restarted. Their sessions must survive the restart (a process
	// whose session expires counts as gone, and the others may leave),
	// so they get a timeout longer than a JVM takes to start.
	runBarrier(t, ctx, addr, dir+"/barrier", 3, func() {
		srv.Kill()
		srv.StartAgain()
		waitProgress("kill -9 and restart")
	}, client.SessionTimeout(30*time.Second))
	srv.Pause()
	time.Sleep(2*sessionTimeout + 2*time.Second) // past the session timeout and the server's tick
	srv.Resume()
	waitProgress("a pause longer than the session timeout")
	stopWork()
	wg.Wait()

	// Drain the queue: each consumer's successor first delivers what its
	// predecessor had claimed, then everything left.
	for i := range 2 {
		c := connect(t, addr)
		q := recipes.NewQueue(c, dir+"/queue", fmt.Sprintf("consumer%d", i))
		for range 10000 {
			short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
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
	c := connect(t, addr)
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
	t.Logf("holds: mutex %d (lost %d), simple %d (lost %d), election %d (lost %d), rw %d; queue %d; counter %d (unknown %d); config views %d; leaders observed %d",
		mutexJ.holds.Load(), mutexJ.lost.Load(), simpleJ.holds.Load(), simpleJ.lost.Load(),
		electJ.holds.Load(), electJ.lost.Load(), rw.holds.Load(), qlog.count(), counter.count(), counter.unknowns.Load(),
		cfgViews.Load(), observed.Load())
}

// reportStuck logs, for a failed liveness check, the nodes of each lock
// in queue order with their owning sessions (and the workers they
// belong to), the node each waits on (the one before it; for a reader
// the last write node before it), and what each worker was doing with
// which session.
func reportStuck(t *testing.T, ctx context.Context, addr string, workers []*session, dirs ...string) {
	t.Helper()
	c, closeFn, err := dial(t, addr, "report")
	if err != nil {
		t.Logf("report: %v", err)
		return
	}
	defer closeFn()
	owners := map[int64]string{}
	for _, w := range workers {
		if c := w.cur.Load(); c != nil {
			owners[c.SessionID()] = w.name
		}
	}
	for _, d := range dirs {
		kids, err := c.Children(ctx, d)
		if err != nil {
			t.Logf("report: %s: %v", d, err)
			continue
		}
		slices.SortFunc(kids, func(a, b string) int { return strings.Compare(seqOf(a), seqOf(b)) })
		var b strings.Builder
		for i, k := range kids {
			fmt.Fprintf(&b, "\n\t%s", k)
			st, err := c.Exists(ctx, d+"/"+k)
			switch {
			case err != nil:
				fmt.Fprintf(&b, ": %v", err)
			case st == nil:
				b.WriteString(": gone")
			default:
				who := owners[st.EphemeralOwner]
				if who == "" {
					who = "no live worker"
				}
				fmt.Fprintf(&b, " owner %#x (%s)", st.EphemeralOwner, who)
			}
			if p := waitsOn(kids, i); p != "" {
				fmt.Fprintf(&b, " waits on %s", p)
			}
		}
		t.Logf("report: %s has %d node(s):%s", d, len(kids), b.String())
	}
	for _, w := range workers {
		t.Logf("report: %s", w.describe())
	}
}

// waitsOn is the node that kids[i] waits on in a queue sorted by
// sequence: the one before it, or for a reader the last writer before
// it; "" if it may proceed.
func waitsOn(kids []string, i int) string {
	if !strings.HasPrefix(kids[i], "read-") {
		if i > 0 {
			return kids[i-1]
		}
		return ""
	}
	for j := i - 1; j >= 0; j-- {
		if strings.HasPrefix(kids[j], "write-") {
			return kids[j]
		}
	}
	return ""
}

// seqOf is the sequence suffix of a sequential node's name.
func seqOf(name string) string { return name[max(0, len(name)-10):] }

// release gives a hold up, bounded in time; it continues in the
// background if the server is away.
func release(h *recipes.Held) {
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	_ = h.Release(ctx)
}

// session is a worker's connection, replaced when its session ends.
type session struct {
	t       *testing.T
	addr    string
	name    string
	c       *client.Conn
	closeFn func()

	// For reportStuck, read by another goroutine.
	cur   atomic.Pointer[client.Conn]
	phase atomic.Pointer[phase]
}

// phase is what a worker is doing since when.
type phase struct {
	what  string
	since time.Time
}

func (s *session) setPhase(what string) {
	s.phase.Store(&phase{what, time.Now()})
}

func (s *session) describe() string {
	sid, state := int64(0), "no connection"
	if c := s.cur.Load(); c != nil {
		sid, state = c.SessionID(), c.State().String()
	}
	doing := "no lock call yet"
	if p := s.phase.Load(); p != nil {
		doing = fmt.Sprintf("%s for %s", p.what, time.Since(p.since).Round(time.Millisecond))
	}
	return fmt.Sprintf("%s: session %#x (%s), %s", s.name, sid, state, doing)
}

// conn returns a live Conn, connecting anew if the session is over.
func (s *session) conn(ctx context.Context) (*client.Conn, error) {
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
		c, closeFn, err := dialCtx(cctx, s.t, s.addr, s.name)
		cancel()
		if err == nil {
			s.c, s.closeFn = c, closeFn
			s.cur.Store(c)
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, errors.New("could not connect")
}

func (s *session) close() {
	if s.c != nil {
		s.closeFn()
		s.c = nil
	}
}

// unexpected reports an error a recipe should not return: anything but
// the end of the session (expected while the server is frozen).
func (s *session) unexpected(err error) {
	if errors.Is(err, client.ErrSessionExpired) || errors.Is(err, client.ErrClosed) {
		return
	}
	s.t.Errorf("%s: %v", s.name, err)
}

// journal checks mutual exclusion: holders note entering and leaving the
// critical section, which nothing but the lock under test guards. The
// counter of holders inside is the check; the entries (under a Go mutex
// only so that the slice stays well formed) are checked to alternate.
type journal struct {
	t       *testing.T
	name    string
	inside  atomic.Int32
	holds   atomic.Int64
	lost    atomic.Int64
	mu      sync.Mutex
	entries []int // +who+1 on enter, -(who+1) on exit
}

func newJournal(t *testing.T, name string) *journal { return &journal{t: t, name: name} }

// critical runs a critical section for h: nothing if h is already lost,
// otherwise hold for d or until Lost closes, whichever comes first.
func (j *journal) critical(who int, h *recipes.Held, d time.Duration) {
	select {
	case <-h.Lost():
		j.lost.Add(1)
		return
	default:
	}
	if n := j.inside.Add(1); n != 1 {
		j.t.Errorf("%s: holder %d entered with %d other holder(s) inside", j.name, who, n-1)
	}
	j.mu.Lock()
	j.entries = append(j.entries, who+1)
	j.mu.Unlock()
	j.holds.Add(1)
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-h.Lost():
		j.lost.Add(1)
		j.t.Logf("%s: holder %d lost the lock inside: %v", j.name, who, h.Err())
	}
	t.Stop()
	j.mu.Lock()
	j.entries = append(j.entries, -(who + 1))
	j.mu.Unlock()
	j.inside.Add(-1)
}

func (j *journal) check() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := 0; i+1 < len(j.entries); i += 2 {
		if j.entries[i] <= 0 || j.entries[i+1] != -j.entries[i] {
			j.t.Errorf("%s: journal entries %d..%d overlap: %v", j.name, i, i+1, j.entries[i:min(i+4, len(j.entries))])
			return
		}
	}
}

// rwCheck checks the read/write lock: a writer is alone, readers see no
// writer.
type rwCheck struct {
	t       *testing.T
	readers atomic.Int32
	writers atomic.Int32
	holds   atomic.Int64
}

func (c *rwCheck) critical(write bool, h *recipes.Held) {
	select {
	case <-h.Lost():
		return
	default:
	}
	c.holds.Add(1)
	// Each side announces itself before looking at the other, so of two
	// overlapping holders at least one sees the other.
	if write {
		if w := c.writers.Add(1); w != 1 {
			c.t.Errorf("rwmutex: writer entered with %d other writer(s)", w-1)
		}
		if r := c.readers.Load(); r != 0 {
			c.t.Errorf("rwmutex: writer entered with %d reader(s)", r)
		}
	} else {
		c.readers.Add(1)
		if w := c.writers.Load(); w != 0 {
			c.t.Errorf("rwmutex: reader entered with %d writer(s)", w)
		}
	}
	t := time.NewTimer(2 * time.Millisecond)
	select {
	case <-t.C:
	case <-h.Lost():
	}
	t.Stop()
	if write {
		c.writers.Add(-1)
	} else {
		c.readers.Add(-1)
	}
}

// counterLog records increments of 1: successes with the value each
// returned, and calls whose outcome is unknown.
type counterLog struct {
	mu       sync.Mutex
	values   []int64
	unknowns atomic.Int64
}

func (l *counterLog) success(v int64) {
	l.mu.Lock()
	l.values = append(l.values, v)
	l.mu.Unlock()
}

func (l *counterLog) unknown() { l.unknowns.Add(1) }

func (l *counterLog) count() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.values))
}

// check: no two increments returned the same value (none applied twice
// over another), and the final value counts every success and at most
// the unknown ones besides.
func (l *counterLog) check(t *testing.T, final int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	vs := slices.Clone(l.values)
	slices.Sort(vs)
	for i := 1; i < len(vs); i++ {
		if vs[i] == vs[i-1] {
			t.Errorf("counter: two increments both returned %d", vs[i])
		}
	}
	n := int64(len(vs))
	if final < n || final > n+l.unknowns.Load() {
		t.Errorf("counter: final %d, %d successful increments, %d unknown", final, n, l.unknowns.Load())
	}
	if n > 0 && vs[n-1] > final {
		t.Errorf("counter: an increment returned %d, above the final %d", vs[n-1], final)
	}
}
