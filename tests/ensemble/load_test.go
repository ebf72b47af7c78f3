package ensemble

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

// loadConfig shapes a createLoad.
type loadConfig struct {
	workers    int
	sequential func(worker int) bool // sequential or plain persistent creates
	maxOps     int                   // per worker
	maxTime    time.Duration         // per worker
	opPause    time.Duration         // between a worker's creates: leaves CPU to the servers
}

// defaultLoad: a few hundred creates a second in all, bounded well beyond
// what any fault schedule needs.
func defaultLoad(workers int) loadConfig {
	return loadConfig{
		workers:    workers,
		sequential: func(w int) bool { return w%2 == 0 },
		maxOps:     20000,
		maxTime:    150 * time.Second,
		opPause:    10 * time.Millisecond,
	}
}

// createLoad runs workers, each on its own client of the whole ensemble,
// that create znodes under parent and records the outcome of every
// attempt. Each attempt has a unique token, which is the znode's name (a
// plain create) or its prefix before "_" and the sequence number (a
// sequential create), so every znode found later maps to one attempt.
type createLoad struct {
	parent   string
	baseline int64 // every member's zk_znode_count once parent exists
	stop     chan struct{}
	done     chan struct{} // closed when every worker has returned
	wg       sync.WaitGroup
	gate     gate

	mu        sync.Mutex
	acked     map[string]string // token → name of the znode the server reported
	ambiguous map[string]error  // token → connection-type error: may or may not exist
	rejected  map[string]error  // token → the server refused it: does not exist
	stopped   bool
}

// startCreates creates parent, takes the baseline znode count (the same
// on every member), and starts the workers; client w starts at member w
// mod n.
func startCreates(t *testing.T, ens *harness.Ensemble, parent string, cfg loadConfig) *createLoad {
	t.Helper()
	setup := connectAll(t, ens, 0, "setup")
	if _, err := setup.Create(parent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", parent, err)
	}
	setup.Close()
	l := &createLoad{
		parent:    parent,
		baseline:  sameZnodeCount(t, ens),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		acked:     make(map[string]string),
		ambiguous: make(map[string]error),
		rejected:  make(map[string]error),
	}
	conns := make([]*zk.Conn, cfg.workers)
	for w := range conns {
		conns[w] = connectAll(t, ens, w%ens.Len(), fmt.Sprintf("creator%d", w))
	}
	for w, c := range conns {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.work(c, w, cfg)
		}()
	}
	go func() {
		l.wg.Wait()
		close(l.done)
	}()
	t.Cleanup(func() { l.halt(t) })
	return l
}

func (l *createLoad) work(c *zk.Conn, w int, cfg loadConfig) {
	deadline := time.Now().Add(cfg.maxTime)
	acl := zk.WorldACL(zk.PermAll)
	seq := cfg.sequential(w)
	for n := 0; n < cfg.maxOps && time.Now().Before(deadline); n++ {
		if !l.gate.enter(l.stop) {
			return
		}
		token := fmt.Sprintf("w%d-%d", w, n)
		p, flags := l.parent+"/"+token, int32(0)
		if seq {
			p, flags = p+"_", zk.FlagSequence
		}
		got, err := c.Create(p, []byte(token), flags, acl)
		// Recorded before leaving the gate, so a checkpoint that finds
		// the gate idle sees every outcome.
		l.record(token, got, err)
		l.gate.exit()
		select {
		case <-l.stop:
			return
		case <-time.After(cfg.opPause):
		}
	}
}

func (l *createLoad) record(token, got string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.acked[token] = path.Base(got)
	case definite(err):
		l.rejected[token] = err
	default:
		l.ambiguous[token] = err
	}
}

// acks is the number of acknowledged creates so far.
func (l *createLoad) acks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// waitProgress waits until k more creates have been acknowledged: the
// ensemble serves writes again after a fault.
func (l *createLoad) waitProgress(t *testing.T, k int, after string) {
	t.Helper()
	target := l.acks() + k
	if !testutil.Within(progressWait, func() bool {
		if l.acks() >= target {
			return true
		}
		select {
		case <-l.done:
			t.Fatalf("after %s: the load finished (bounds reached) before %d more acknowledged creates", after, k)
		default:
		}
		return false
	}) {
		t.Fatalf("after %s: fewer than %d acknowledged creates within %s (now %d)", after, k, progressWait, l.acks())
	}
}

// pause lets in-flight creates finish and holds new ones until resume.
func (l *createLoad) pause(t *testing.T) {
	t.Helper()
	l.gate.close()
	testutil.Eventually(t, drainWait, "in-flight creates finish", l.gate.idle)
}

func (l *createLoad) resume() { l.gate.open() }

// halt stops the workers and waits for their last operations.
func (l *createLoad) halt(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	if !l.stopped {
		l.stopped = true
		close(l.stop)
	}
	l.mu.Unlock()
	l.gate.open()
	select {
	case <-l.done:
	case <-time.After(drainWait):
		t.Fatalf("creators still busy %s after stop", drainWait)
	}
}

// checkpoint holds the load, waits until every running member reports the
// same zk_znode_count, and checks it lies between the baseline plus the
// acknowledged creates and that plus the ambiguous ones, and that every
// running member lists every acknowledged create by name (after sync, on
// a client of that member alone): no member that serves lacks an
// acknowledged create. It returns the count and lets the load go on.
func (l *createLoad) checkpoint(t *testing.T, tl *timeline, ens *harness.Ensemble, what string) int64 {
	t.Helper()
	l.pause(t)
	defer l.resume()
	members := ens.Up()
	count := sameZnodeCount(t, ens, members...)
	l.mu.Lock()
	acked, ambiguous := int64(len(l.acked)), int64(len(l.ambiguous))
	ackedNames := make([]string, 0, len(l.acked))
	for _, name := range l.acked {
		ackedNames = append(ackedNames, name)
	}
	l.mu.Unlock()
	for _, i := range members {
		have := make(map[string]bool)
		for _, name := range syncedChildren(t, ens, i, l.parent) {
			have[name] = true
		}
		var lost []string
		for _, name := range ackedNames {
			if !have[name] {
				lost = append(lost, name)
			}
		}
		if len(lost) > 0 {
			sort.Strings(lost)
			t.Errorf("%s: %s lacks %d of %d acknowledged creates: %v",
				what, ens.MemberString(i), len(lost), len(ackedNames), head(lost))
		}
	}
	lo, hi := l.baseline+acked, l.baseline+acked+ambiguous
	tl.logf("%s: members %v agree on zk_znode_count %d (baseline %d + %d acknowledged + up to %d ambiguous)",
		what, members, count, l.baseline, acked, ambiguous)
	if count < lo || count > hi {
		t.Errorf("%s: zk_znode_count %d outside [%d, %d]: baseline %d, %d acknowledged creates, %d ambiguous",
			what, count, lo, hi, l.baseline, acked, ambiguous)
	}
	return count
}

// summary describes the attempts for the log.
func (l *createLoad) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	kinds := map[string]int{}
	for _, err := range l.ambiguous {
		kinds[err.Error()]++
	}
	for _, err := range l.rejected {
		kinds["rejected: "+err.Error()]++
	}
	return fmt.Sprintf("%d acknowledged, %d ambiguous, %d rejected; errors %v",
		len(l.acked), len(l.ambiguous), len(l.rejected), kinds)
}

// verify reads parent's children from every member on a client of that
// member alone, after sync, and checks that all members hold the same
// children, every acknowledged create is among them, every child comes
// from exactly one acknowledged or ambiguous attempt, and every member's
// zk_znode_count is the baseline plus the children. It returns the number
// of children. The workers must have stopped.
func (l *createLoad) verify(t *testing.T, ens *harness.Ensemble) int {
	t.Helper()
	l.mu.Lock()
	if !l.stopped {
		l.mu.Unlock()
		t.Fatal("verify while the load runs")
	}
	l.mu.Unlock()
	ens.WaitAll()

	sets := make([]map[string]bool, ens.Len())
	for i := range sets {
		names := syncedChildren(t, ens, i, l.parent)
		sets[i] = make(map[string]bool, len(names))
		for _, n := range names {
			sets[i][n] = true
		}
	}
	for i := 1; i < len(sets); i++ {
		if missing, extra := diff(sets[0], sets[i]); len(missing)+len(extra) > 0 {
			t.Errorf("%s has %d children of %s, %s has %d: %s lacks %v; has in addition %v",
				ens.MemberString(0), len(sets[0]), l.parent, ens.MemberString(i), len(sets[i]),
				ens.MemberString(i), head(missing), head(extra))
		}
	}

	// Every acknowledged create, on every member.
	for i, set := range sets {
		var lost []string
		for _, name := range l.acked {
			if !set[name] {
				lost = append(lost, name)
			}
		}
		if len(lost) > 0 {
			sort.Strings(lost)
			t.Errorf("%s lost %d of %d acknowledged creates: %v", ens.MemberString(i), len(lost), len(l.acked), head(lost))
		}
	}

	// Every znode comes from one attempt that may have happened.
	seen := map[string]string{}
	foundAmbiguous := 0
	for name := range sets[0] {
		token, _, _ := strings.Cut(name, "_")
		if prev, dup := seen[token]; dup {
			t.Errorf("attempt %s created two znodes: %s and %s", token, prev, name)
			continue
		}
		seen[token] = name
		switch {
		case l.acked[token] == name:
		case l.ambiguous[token] != nil:
			foundAmbiguous++
		case l.rejected[token] != nil:
			t.Errorf("znode %s exists although its create was refused: %v", name, l.rejected[token])
		default:
			t.Errorf("znode %s matches no attempt", name)
		}
	}
	t.Logf("creates: %s; %d ambiguous ones happened; %d children on each member",
		l.summary(), foundAmbiguous, len(sets[0]))

	count := sameZnodeCount(t, ens)
	if want := l.baseline + int64(len(sets[0])); count != want {
		t.Errorf("zk_znode_count = %d on every member, want baseline %d + %d znodes under %s = %d",
			count, l.baseline, len(sets[0]), l.parent, want)
	}
	if got, want := len(sets[0]), len(l.acked)+foundAmbiguous; got != want {
		t.Errorf("%d children, want %d acknowledged + %d ambiguous that happened = %d", got, len(l.acked), foundAmbiguous, want)
	}
	return len(sets[0])
}

// syncedChildren lists parent on member i alone after a sync, retrying
// connection errors until a deadline (reads are idempotent).
func syncedChildren(t *testing.T, ens *harness.Ensemble, i int, parent string) []string {
	t.Helper()
	c := connectOne(t, ens, i)
	defer c.Close()
	var (
		names []string
		err   error
	)
	if !testutil.Within(convergeWait, func() bool {
		if _, err = c.Sync(parent); err == nil {
			names, _, err = c.Children(parent)
		}
		return err == nil || definite(err)
	}) || err != nil {
		t.Fatalf("sync+children %s on %s: %v", parent, ens.MemberString(i), err)
	}
	return names
}

func diff(a, b map[string]bool) (missing, extra []string) {
	for k := range a {
		if !b[k] {
			missing = append(missing, k)
		}
	}
	for k := range b {
		if !a[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// head keeps error messages short.
func head(xs []string) []string {
	if len(xs) > 10 {
		return append(xs[:10:10], fmt.Sprintf("... (%d more)", len(xs)-10))
	}
	return xs
}

// gate lets a test hold the workers between operations.
type gate struct {
	mu       sync.Mutex
	closed   bool
	inflight int
}

// gatePoll is how often a held worker looks at the gate again.
const gatePoll = 20 * time.Millisecond

// enter waits until the gate is open and counts the caller in; false
// means stop was closed first.
func (g *gate) enter(stop <-chan struct{}) bool {
	for {
		g.mu.Lock()
		if !g.closed {
			g.inflight++
			g.mu.Unlock()
			return true
		}
		g.mu.Unlock()
		select {
		case <-stop:
			return false
		case <-time.After(gatePoll):
		}
	}
}

func (g *gate) exit() {
	g.mu.Lock()
	g.inflight--
	g.mu.Unlock()
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func (g *gate) open() {
	g.mu.Lock()
	g.closed = false
	g.mu.Unlock()
}

// idle reports whether no operation is in flight.
func (g *gate) idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inflight == 0
}
