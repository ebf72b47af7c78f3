package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// crashWorker is one client's view of its writes: creates of unique nodes
// and setData of one node with increasing sequence numbers.
type crashWorker struct {
	id         int
	created    []string // acknowledged creates
	ackedSet   int      // highest acknowledged setData sequence (0: none)
	triedSet   int      // highest attempted setData sequence
	createErrs int
	setErrs    int
}

func (w *crashWorker) dataPath() string { return fmt.Sprintf("/crash/data%d", w.id) }

// TestCrash kills the server with SIGKILL at seeded random moments while
// several go-zk clients write, restarts it on the same data directory, and
// checks at the end that every acknowledged write survived: every
// acknowledged create exists with its payload, and every node written
// with setData holds its last acknowledged value or a later attempted one.
func TestCrash(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CORRAL_E2E_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CORRAL_E2E_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("crash test seed %d (rerun with CORRAL_E2E_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	const (
		workers      = 4
		maxOpsWorker = 20000 // bound on each worker's loop
		opPause      = time.Millisecond
		sampleData   = 300 // acknowledged creates whose payload is read back
	)
	rounds := 4
	if testing.Short() {
		rounds = 2
	}

	srv := env.Start(t)
	setup, _ := connect(t, srv)
	open := zk.WorldACL(zk.PermAll)
	try(setup.Create("/crash", nil, 0, open)).must(t)

	ws := make([]*crashWorker, workers)
	conns := make([]*zk.Conn, workers)
	for i := range ws {
		ws[i] = &crashWorker{id: i}
		try(setup.Create(ws[i].dataPath(), []byte("0"), 0, open)).must(t)
		conns[i], _ = connect(t, srv)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runCrashWorker(w, conns[i], stop, maxOpsWorker, opPause)
		}()
	}

	for round := 1; round <= rounds; round++ {
		// Let the workload run for a random while, then SIGKILL.
		time.Sleep(time.Duration(200+rng.IntN(1000)) * time.Millisecond)
		srv.Kill()
		// Sometimes stay down a little: clients pile up failed attempts.
		time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
		srv.StartAgain()
		t.Logf("round %d: killed and restarted", round)
	}
	// A last stretch of writes on the final incarnation, then stop.
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	check, _ := connect(t, srv)
	kids, _, err := check.Children("/crash")
	mustOK(t, err)
	present := make(map[string]bool, len(kids))
	for _, k := range kids {
		present["/crash/"+k] = true
	}
	total := 0
	for _, w := range ws {
		total += len(w.created)
		t.Logf("worker %d: %d creates acknowledged (%d failed), setData acked up to %d, tried up to %d (%d failed)",
			w.id, len(w.created), w.createErrs, w.ackedSet, w.triedSet, w.setErrs)
		for _, p := range w.created {
			if !present[p] {
				t.Errorf("acknowledged create %s is missing", p)
			}
		}
		for range min(sampleData/workers, len(w.created)) {
			p := w.created[rng.IntN(len(w.created))]
			data, _, err := check.Get(p)
			if err != nil || string(data) != p {
				t.Errorf("acknowledged create %s: data %q, err %v", p, data, err)
			}
		}
		data, _, err := check.Get(w.dataPath())
		if err != nil {
			t.Errorf("get %s: %v", w.dataPath(), err)
			continue
		}
		got, err := strconv.Atoi(string(data))
		if err != nil || got < w.ackedSet || got > w.triedSet {
			t.Errorf("%s = %q: want a value in [%d, %d] (last acknowledged, last attempted)",
				w.dataPath(), data, w.ackedSet, w.triedSet)
		}
	}
	if total == 0 {
		t.Error("no write was acknowledged at all")
	}
}

// runCrashWorker alternates creates and setData until stop or maxOps.
// Errors are expected while the server is down; the outcome of a failed
// write is unknown, so it is only counted.
func runCrashWorker(w *crashWorker, c *zk.Conn, stop <-chan struct{}, maxOps int, pause time.Duration) {
	open := zk.WorldACL(zk.PermAll)
	for i := 0; i < maxOps; i++ {
		select {
		case <-stop:
			return
		default:
		}
		time.Sleep(pause)
		var err error
		if i%2 == 0 {
			p := fmt.Sprintf("/crash/w%d-%06d", w.id, i)
			if _, err = c.Create(p, []byte(p), 0, open); err == nil {
				w.created = append(w.created, p)
			} else {
				w.createErrs++
			}
		} else {
			w.triedSet++
			seq := w.triedSet
			if _, err = c.Set(w.dataPath(), []byte(strconv.Itoa(seq)), -1); err == nil {
				w.ackedSet = seq
			} else {
				w.setErrs++
			}
		}
		if err != nil {
			// Back off a little while the server is away.
			time.Sleep(20 * time.Millisecond)
		}
	}
}
