package ensemble

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/corral-db/corral/internal/linmodel"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
	"github.com/go-zookeeper/zk"
)

// CAS workload bounds: a few hundred operations per register keep
// porcupine's search short; the time bound stops a stalled run.
const (
	casRegisters   = 3
	casClients     = 5
	casMaxOps      = 250 // per client (casBounds' default)
	casMaxTime     = 40 * time.Second
	casOpPause     = 80 * time.Millisecond
	casAfterFaults = 3 * time.Second // load after the last fault before stopping
	casMinComplete = 100             // a history with fewer completed ops proves little
)

// TestLinearizableCAS: clients spread over the members read (after sync),
// compare-and-set (setData with the version they last saw) and blindly set
// a few znodes while the leader is killed, restarted and frozen; the
// recorded history must be linearizable for a versioned register.
func TestLinearizableCAS(t *testing.T) {
	t.Parallel()
	for _, n := range sizes(false) {
		t.Run(fmt.Sprintf("servers=%d", n), func(t *testing.T) {
			t.Parallel()
			testLinearizableCAS(t, n)
		})
	}
}

func testLinearizableCAS(t *testing.T, n int) {
	runCAS(t, start(t, n), defaultCASBounds, func(ens *harness.Ensemble, tl *timeline, waitOps func(int, string)) {
		// leaderDown takes the leader down, waits for another to lead
		// and for the load to go on, and brings the old one back.
		leaderDown := func(what string, down, up func(*harness.Server)) int {
			old := ens.WaitQuorum()
			tl.logf("%s leader %s", what, ens.MemberString(old))
			down(ens.Server(old))
			tl.logf("new leader %s", ens.MemberString(ens.WaitQuorum()))
			waitOps(30, "leader "+what)
			up(ens.Server(old))
			return old
		}
		old := leaderDown("kill", (*harness.Server).Kill, (*harness.Server).StartAgain)
		tl.logf("%s back as %s", ens.MemberString(old), ens.Mode(old))
		waitOps(30, "leader restart")

		frozen := leaderDown("freeze", (*harness.Server).Pause, (*harness.Server).Resume)
		tl.logf("continued %s", ens.MemberString(frozen))
		ens.WaitAll()
		tl.logf("%s back as %s", ens.MemberString(frozen), ens.Mode(frozen))

		if *long {
			leaderDown("stop (SIGTERM)", (*harness.Server).Stop, (*harness.Server).StartAgain)
		}
	})
}

// casBounds bound each CAS client: operations and time.
type casBounds struct {
	maxOps  int
	maxTime time.Duration
}

// defaultCASBounds fit a run of a few faults.
var defaultCASBounds = casBounds{maxOps: casMaxOps, maxTime: casMaxTime}

// runCAS runs the CAS workload on ens: faults runs once the clients have
// completed some operations (waitOps(k, after) waits for k more), then
// the clients go on for a while and stop, and the history must be
// linearizable.
func runCAS(t *testing.T, ens *harness.Ensemble, bounds casBounds, faults func(ens *harness.Ensemble, tl *timeline, waitOps func(k int, after string))) {
	rng := newRand(t)
	tl := newTimeline(t)

	setup := connectAll(t, ens, 0, "setup")
	for k := 0; k < casRegisters; k++ {
		if _, err := setup.Create(casPath(k), []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", casPath(k), err)
		}
	}
	setup.Close()

	h := &casHistory{start: time.Now()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < casClients; c++ {
		conn := connectAll(t, ens, c%ens.Len(), fmt.Sprintf("cas%d", c))
		seed := rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			runCASClient(conn, c, rand.New(rand.NewPCG(seed, uint64(c))), h, bounds, stop)
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	halt := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		select {
		case <-done:
		case <-time.After(drainWait):
			t.Fatalf("CAS clients still busy %s after stop", drainWait)
		}
	}
	t.Cleanup(halt)

	waitOps := func(k int, after string) {
		t.Helper()
		target := h.completed() + k
		testutil.Eventually(t, progressWait, after+": CAS clients complete operations", func() bool {
			select {
			case <-done:
				t.Fatalf("after %s: the CAS clients reached their bounds before %d more operations", after, k)
			default:
			}
			return h.completed() >= target
		})
	}

	waitOps(30, "start")
	faults(ens, tl, waitOps)
	waitOps(30, "faults")
	time.Sleep(casAfterFaults)
	// However slow the machine, the history holds casMinComplete
	// completed operations before the clients stop.
	waitOps(casMinComplete-h.completed(), "the load after the faults")
	halt()
	tl.logf("clients stopped")

	ops := h.operations()
	t.Logf("history: %s", h.summary())
	if c := h.completed(); c < casMinComplete {
		t.Fatalf("only %d completed operations: the history proves little", c)
	}

	// Writes go through the leader and a quorum: they must be linearizable
	// on both targets.
	var writes []porcupine.Operation
	for _, op := range ops {
		if op.Input.(linmodel.Op).Kind != linmodel.Read {
			writes = append(writes, op)
		}
	}
	if !checkHistory(t, "writes", writes) {
		t.Errorf("the %d writes (set, CAS) are not linearizable", len(writes))
	}

	// With the reads. The contract (DESIGN.md) says a read after sync sees
	// every write that completed before the sync was issued, which makes
	// this history linearizable too. ZooKeeper 3.9.3 does not always keep
	// that promise: a leader frozen past the sync limit and then continued
	// still serves, for a moment, a client that re-attaches its session to
	// it, and answers sync and getData from its stale tree before it
	// notices it was deposed. So a violation fails corral, and is only
	// logged for the reference.
	if !checkHistory(t, "writes and synced reads", ops) {
		if env.IsZooKeeper() {
			t.Logf("KNOWN ZOOKEEPER DEVIATION: the history with synced reads is not linearizable (a deposed leader answered sync+read; see above)")
		} else {
			t.Errorf("the history of %d operations with synced reads is not linearizable", len(ops))
		}
	}
}

// casMeta travels with each operation for the failure report.
type casMeta struct {
	server string // the server the client was connected to when the op returned
}

func (m casMeta) String() string { return m.server }

// checkHistory runs porcupine on ops and reports whether they are
// linearizable. For a register that is not, it logs the operations around
// the point where the longest linearization found stops, with the server
// each client was connected to, and writes porcupine's visualization.
func checkHistory(t *testing.T, what string, ops []porcupine.Operation) bool {
	t.Helper()
	model := linmodel.Model
	began := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, 0)
	t.Logf("porcupine, %s: %s for %d operations in %s", what, res, len(ops), time.Since(began).Round(time.Millisecond))
	if res == porcupine.Ok {
		return true
	}
	for p, partials := range info.PartialLinearizationsOperations() {
		part := model.Partition(ops)[p]
		longest := partials[0]
		for _, l := range partials {
			if len(l) > len(longest) {
				longest = l
			}
		}
		if len(longest) == len(part) {
			continue
		}
		in := map[int64]bool{} // calls are unique enough within a partition
		var lastCall int64
		for _, op := range longest {
			in[op.Call] = true
			lastCall = max(lastCall, op.Call)
		}
		sort.Slice(part, func(i, j int) bool { return part[i].Call < part[j].Call })
		var lines []string
		for _, op := range part {
			if op.Call >= lastCall-int64(time.Second) && len(lines) < 40 {
				mark := "  "
				if !in[op.Call] {
					mark = "! "
				}
				ret := "inf"
				if op.Return != linmodel.UnknownReturn {
					ret = fmt.Sprintf("%.3fs", time.Duration(op.Return).Seconds())
				}
				lines = append(lines, fmt.Sprintf("%s[%.3fs, %s] client %d on %v: %s", mark,
					time.Duration(op.Call).Seconds(), ret, op.ClientId, op.Metadata,
					model.DescribeOperation(op.Input, op.Output)))
			}
		}
		t.Logf("%s: register %d: %d of %d operations linearize; around the stop (! = not linearized):\n%s",
			what, p, len(longest), len(part), strings.Join(lines, "\n"))
	}
	if f, err := os.CreateTemp("", "corral-cas-*.html"); err == nil {
		_ = porcupine.Visualize(model, info, f)
		f.Close()
		t.Logf("%s: porcupine visualization in %s", what, f.Name())
	}
	return false
}

func casPath(k int) string { return "/cas" + strconv.Itoa(k) }

// casHistory collects operations from every client.
type casHistory struct {
	start time.Time

	mu       sync.Mutex
	ops      []porcupine.Operation
	nextID   int // porcupine client ids: a client takes a new one after an ambiguous op
	done     int // completed operations (not ambiguous, not dropped)
	unknown  int
	dropped  int // failed reads: no effect, not in the history
	casOK    int
	casFail  int
	errKinds map[string]int
}

func (h *casHistory) now() int64 { return int64(time.Since(h.start)) }

func (h *casHistory) newClientID() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.nextID
	h.nextID++
	return id
}

func (h *casHistory) add(op porcupine.Operation, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.errKinds == nil {
		h.errKinds = map[string]int{}
	}
	if err != nil {
		h.errKinds[err.Error()]++
	}
	out := op.Output.(linmodel.Output)
	switch {
	case out.Unknown:
		h.unknown++
	default:
		h.done++
		if op.Input.(linmodel.Op).Kind == linmodel.CAS {
			if out.OK {
				h.casOK++
			} else {
				h.casFail++
			}
		}
	}
	h.ops = append(h.ops, op)
}

func (h *casHistory) drop(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.errKinds == nil {
		h.errKinds = map[string]int{}
	}
	h.errKinds[err.Error()]++
	h.dropped++
}

func (h *casHistory) completed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done
}

func (h *casHistory) operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]porcupine.Operation(nil), h.ops...)
}

func (h *casHistory) summary() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return fmt.Sprintf("%d operations: %d completed (CAS %d ok, %d BadVersion), %d ambiguous writes, %d failed reads dropped; errors %v",
		len(h.ops), h.done, h.casOK, h.casFail, h.unknown, h.dropped, h.errKinds)
}

// runCASClient issues random operations until stop or one of its
// bounds. It remembers the last version it saw of each register and
// uses it as the CAS expectation, so some CASes win and some lose.
func runCASClient(c *zk.Conn, idx int, rng *rand.Rand, h *casHistory, b casBounds, stop <-chan struct{}) {
	id := h.newClientID()
	seen := make([]int32, casRegisters)
	deadline := time.Now().Add(b.maxTime)
	for n := 0; n < b.maxOps && time.Now().Before(deadline); n++ {
		key := rng.IntN(casRegisters)
		p := casPath(key)
		value := int64(idx+1)*1_000_000 + int64(n) // unique per write
		var in linmodel.Op
		switch r := rng.IntN(10); {
		case r < 4:
			in = linmodel.Op{Kind: linmodel.Read, Key: key}
		case r < 8:
			in = linmodel.Op{Kind: linmodel.CAS, Key: key, Value: value, Expect: seen[key]}
		default:
			in = linmodel.Op{Kind: linmodel.Set, Key: key, Value: value}
		}
		call := h.now()
		var (
			out linmodel.Output
			err error
		)
		switch in.Kind {
		case linmodel.Read:
			var data []byte
			var st *zk.Stat
			if _, err = c.Sync(p); err == nil {
				data, st, err = c.Get(p)
			}
			if err == nil {
				v, perr := strconv.ParseInt(string(data), 10, 64)
				if perr != nil {
					v = -1 // no write produces it: the check fails
				}
				out = linmodel.Output{Result: linmodel.Result{OK: true, Value: v, Version: st.Version}}
				seen[key] = st.Version
			}
		case linmodel.Set, linmodel.CAS:
			expect := int32(-1)
			if in.Kind == linmodel.CAS {
				expect = in.Expect
			}
			var st *zk.Stat
			st, err = c.Set(p, []byte(strconv.FormatInt(value, 10)), expect)
			switch {
			case err == nil:
				out = linmodel.Output{Result: linmodel.Result{OK: true, Version: st.Version}}
				seen[key] = st.Version
			case errors.Is(err, zk.ErrBadVersion) && in.Kind == linmodel.CAS:
				out = linmodel.Output{}
			}
		}
		ret := h.now()
		meta := casMeta{server: c.Server()}
		switch {
		case err == nil || (errors.Is(err, zk.ErrBadVersion) && in.Kind == linmodel.CAS):
			h.add(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret, Metadata: meta}, err)
		case in.Kind == linmodel.Read:
			h.drop(err) // a read that failed changed nothing
		default:
			// Any other error leaves the write ambiguous (a definite
			// server error other than BadVersion would be a bug in the
			// workload, and is recorded as such by the model: unknown
			// is the conservative reading).
			h.add(porcupine.Operation{ClientId: id, Input: in, Call: call,
				Output: linmodel.Output{Unknown: true}, Return: linmodel.UnknownReturn, Metadata: meta}, err)
			id = h.newClientID()
		}
		select {
		case <-stop:
			return
		case <-time.After(casOpPause):
		}
	}
}
