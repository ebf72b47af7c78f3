package kv_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testutil"
)

// The sequential specification: each row's cell cf:q is a register
// holding an int64 (0: absent). get reads it; put writes; cas
// (check-and-put) writes only if it holds expect.

type regKind int

const (
	regGet regKind = iota
	regPut
	regCAS
)

type regInput struct {
	kind   regKind
	key    int
	value  int64
	expect int64
}

type regOutput struct {
	unknown bool // a write whose outcome the client could not learn
	ok      bool // cas: the condition held
	value   int64
}

const unknownReturn = math.MaxInt64

func regModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			by := map[int][]porcupine.Operation{}
			for _, op := range h {
				k := op.Input.(regInput).key
				by[k] = append(by[k], op)
			}
			var out [][]porcupine.Operation
			for _, ops := range by {
				out = append(out, ops)
			}
			return out
		},
		Init: func() any { return int64(0) },
		Step: func(state, input, output any) (bool, any) {
			st, in, out := state.(int64), input.(regInput), output.(regOutput)
			switch in.kind {
			case regGet:
				return out.value == st, st
			case regPut:
				return true, in.value
			default:
				match := st == in.expect
				switch {
				case out.unknown && match:
					return true, in.value
				case out.unknown:
					return true, st
				case out.ok:
					return match, in.value
				default:
					return !match, st
				}
			}
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(regInput), output.(regOutput)
			switch in.kind {
			case regGet:
				return fmt.Sprintf("k%d get -> %d", in.key, out.value)
			case regPut:
				return fmt.Sprintf("k%d put(%d) unknown=%v", in.key, in.value, out.unknown)
			}
			return fmt.Sprintf("k%d cas(%d, %d) -> ok=%v unknown=%v", in.key, in.expect, in.value, out.ok, out.unknown)
		},
	}
}

// TestLinearizableUnderLeaderKills: clients get, put and check-and-put a
// few registers while the leader is SIGKILLed and restarted; porcupine
// checks the history.
func TestLinearizableUnderLeaderKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 3-process group under load")
	}
	eps, ss := startServers(t, 3)
	checkRegisters(t, eps, func() {
		// Kill the leader twice during the load, restarting it each time.
		for round := 0; round < 2; round++ {
			time.Sleep(700 * time.Millisecond)
			l := leaderOf(t, eps)
			ss[l].kill()
			time.Sleep(300 * time.Millisecond)
			ss[l].start(t)
		}
	})
}

// checkRegisters runs the register load on the group at eps, runs
// faults meanwhile, and checks with porcupine that the history is
// linearizable once the group has served again after the faults.
func checkRegisters(t *testing.T, eps []string, faults func()) {
	t.Helper()
	c, err := kvclient.New(kvclient.Config{Endpoints: eps, RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateTable(context.Background(), &kvpb.CreateTableRequest{Table: "reg", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	const keys, clients = 3, 4
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		next    atomic.Int64
		settled atomic.Int64 // operations with a known outcome
	)
	// The load runs until the faults are over and the group has settled
	// minOK operations, however long a loaded machine takes for them
	// (bounded by loadWait); each client stops after maxOps operations, more
	// than a quiet machine gets through before the faults are over.
	const minOK, minAfter = 50, 10
	const loadWait = 120 * time.Second
	const maxOps = 20000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for cl := 0; cl < clients; cl++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(cl), 7))
			var seen int64
			for n := 0; n < maxOps && ctx.Err() == nil; n++ {
				in := regInput{kind: regKind(rng.IntN(3)), key: rng.IntN(keys), value: next.Add(1), expect: seen}
				row := []byte(fmt.Sprintf("k%d", in.key))
				cell := []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte(strconv.FormatInt(in.value, 10))}}
				opCtx, opCancel := context.WithTimeout(context.Background(), 10*time.Second)
				call := now()
				var out regOutput
				var err error
				switch in.kind {
				case regGet:
					var r *kvpb.GetResponse
					r, err = c.Get(opCtx, &kvpb.GetRequest{Table: "reg", Row: row})
					if kvclient.IsNotFound(err) {
						err = nil
					} else if err == nil && len(r.Cells) == 1 {
						out.value, _ = strconv.ParseInt(string(r.Cells[0].Value), 10, 64)
						seen = out.value
					}
				case regPut:
					_, err = c.Put(opCtx, &kvpb.PutRequest{Table: "reg", Row: row, Cells: cell})
				case regCAS:
					cond := &kvpb.Condition{Family: "cf", Qualifier: []byte("q"), Value: []byte(strconv.FormatInt(in.expect, 10))}
					if in.expect == 0 {
						cond = &kvpb.Condition{Family: "cf", Qualifier: []byte("q"), Absent: true}
					}
					var r *kvpb.CheckAndPutResponse
					r, err = c.CheckAndPut(opCtx, &kvpb.CheckAndPutRequest{Table: "reg", Row: row, Condition: cond, Cells: cell})
					if err == nil {
						out.ok = r.Succeeded
					}
				}
				opCancel()
				ret := now()
				if err != nil {
					if in.kind == regGet {
						continue // a failed read constrains nothing
					}
					out.unknown, ret = true, unknownReturn
				}
				if !out.unknown {
					settled.Add(1)
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	faults()
	afterFaults := settled.Load()
	// The group serves again after the faults: minAfter operations
	// settle after them, minOK in all.
	clientsDone := make(chan struct{})
	go func() { wg.Wait(); close(clientsDone) }()
	servedEnough := func() bool { n := settled.Load(); return n >= afterFaults+minAfter && n >= minOK }
	testutil.Within(loadWait, func() bool {
		select {
		case <-clientsDone:
			return true
		default:
			return servedEnough()
		}
	})
	cancel()
	<-clientsDone
	served := servedEnough()
	ok, unknown := 0, 0
	for _, op := range history {
		if op.Output.(regOutput).unknown {
			unknown++
		} else {
			ok++
		}
	}
	t.Logf("%d operations (%d with unknown outcome)", ok+unknown, unknown)
	if !served {
		t.Fatalf("%d operations settled, %d of them after the faults, within %s; want %d and %d after them", ok, settled.Load()-afterFaults, loadWait, minOK, minAfter)
	}
	res, info := porcupine.CheckOperationsVerbose(regModel(), history, 30*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history not linearizable (%v): %v", res, info)
	}
}

// TestLinearizableUnderPartitions: the register load while the group's
// network fails silently (harness.Relays): the leader cut off from both
// followers, the leader cut from one follower only, one way of that pair
// and then the other, then random cuts (isolations, pairs, one way),
// some shorter than the sync limit, each healed before the next.
func TestLinearizableUnderPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 3-process group under load")
	}
	eps, _, r := startServersRelayed(t, 3)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	checkRegisters(t, eps, func() {
		time.Sleep(700 * time.Millisecond)
		l := leaderOf(t, eps)
		t.Logf("isolating leader %d", l+1)
		for j := range 3 {
			if j != l {
				r.SetCut(l, j, true)
			}
		}
		nl := -1
		testutil.Eventually(t, 60*time.Second, "a new leader", func() bool {
			nl = leaderOf(t, eps)
			return nl != l
		})
		t.Logf("new leader %d; healing", nl+1)
		r.Heal()
		time.Sleep(time.Second)
		l = leaderOf(t, eps)
		f := (l + 1) % 3
		t.Logf("cutting leader %d from follower %d", l+1, f+1)
		r.SetCut(l, f, true)
		time.Sleep(1500 * time.Millisecond)
		r.Heal()
		time.Sleep(time.Second)
		l = leaderOf(t, eps)
		f = (l + 1) % 3
		t.Logf("dropping what leader %d sends to follower %d, then the reverse", l+1, f+1)
		r.CutOneWay(l, f)
		time.Sleep(1500 * time.Millisecond)
		r.Heal()
		r.CutOneWay(f, l)
		time.Sleep(1500 * time.Millisecond)
		r.Heal()
		for round := range 4 {
			p := rng.Perm(3)
			hold := time.Duration(200+rng.IntN(1500)) * time.Millisecond
			switch rng.IntN(3) {
			case 0:
				r.SetCut(p[0], p[1], true)
				r.SetCut(p[0], p[2], true)
				t.Logf("round %d: isolating %d for %v", round, p[0]+1, hold)
			case 1:
				r.SetCut(p[0], p[1], true)
				t.Logf("round %d: cutting %d from %d for %v", round, p[0]+1, p[1]+1, hold)
			default:
				r.CutOneWay(p[0], p[1])
				t.Logf("round %d: dropping what %d sends to %d for %v", round, p[0]+1, p[1]+1, hold)
			}
			time.Sleep(hold)
			r.Heal()
			time.Sleep(300 * time.Millisecond)
		}
	})
}

// TestRegModel shows the model rejects what it must: a read of a value
// older than a completed put, and a check-and-put that succeeded against
// a value the register no longer held.
func TestRegModel(t *testing.T) {
	op := func(cl int, in regInput, call, ret int64, out regOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret}
	}
	bad := [][]porcupine.Operation{
		{op(0, regInput{kind: regPut, value: 1}, 0, 1, regOutput{}), op(1, regInput{kind: regGet}, 2, 3, regOutput{value: 0})},
		{op(0, regInput{kind: regPut, value: 1}, 0, 1, regOutput{}), op(0, regInput{kind: regPut, value: 2}, 2, 3, regOutput{}),
			op(1, regInput{kind: regCAS, expect: 1, value: 3}, 4, 5, regOutput{ok: true})},
	}
	for i, h := range bad {
		if porcupine.CheckOperations(regModel(), h) {
			t.Errorf("history %d accepted", i)
		}
	}
	good := []porcupine.Operation{
		op(0, regInput{kind: regPut, value: 1}, 0, unknownReturn, regOutput{unknown: true}),
		op(1, regInput{kind: regGet}, 2, 3, regOutput{value: 0}),
		op(1, regInput{kind: regGet}, 4, 5, regOutput{value: 1}),
	}
	if !porcupine.CheckOperations(regModel(), good) {
		t.Error("a write of unknown outcome seen late was rejected")
	}
}
