package kv_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// TestClusterRangeMove: `corral kv cluster -groups 2 -replicas 3` with
// node processes; clients get, put and check-and-put registers whose rows
// all hash into one range of RG 1 while `corral kv move` moves that range
// to RG 2 and back, twice: once straight, then with the mover stopped
// (as if crashed) after the fence, the copy and the ring switch, each
// time finished by `corral kv move -resume` (the node leading the
// source RG SIGKILLed before one of the resumes), and once more stopped
// after the copy and aborted (`corral kv move -abort`). Porcupine checks the registers' history; every put
// also writes a cell named by its (unique) value, so that afterwards
// every acknowledged put is found exactly once (one version) and no put
// is found that was never sent; after each move the range's rows are
// gone from the group it left.
func TestClusterRangeMove(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sharded cluster under load")
	}
	c := startCluster(t, 2, 3, true)
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	st := c.store(t, ctx)
	token, rg := firstRange(t, ctx, st, 1)
	const keys, clients = 4, 4
	var rows [][]byte
	for i := 0; len(rows) < keys; i++ {
		k := []byte(fmt.Sprintf("mv%d", i))
		if rg.Contains(ring.Hash(k)) {
			rows = append(rows, k)
		}
	}

	kc := c.client(t)
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "mv", Families: []*kvpb.Family{{Name: "cf"}, {Name: "log", MaxVersions: 4}}}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		next    atomic.Int64
		settled atomic.Int64
	)
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(cl), 11))
			var seen int64
			for n := 0; n < 3000 && loadCtx.Err() == nil; n++ {
				in := regInput{kind: regKind(rng.IntN(3)), key: rng.IntN(keys), value: next.Add(1), expect: seen}
				row := rows[in.key]
				v := []byte(strconv.FormatInt(in.value, 10))
				cells := []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: v}, {Family: "log", Qualifier: v, Value: v}}
				opCtx, opCancel := context.WithTimeout(ctx, 15*time.Second)
				call := now()
				var out regOutput
				var err error
				switch in.kind {
				case regGet:
					var r *kvpb.GetResponse
					r, err = kc.Get(opCtx, &kvpb.GetRequest{Table: "mv", Row: row, Options: &kvpb.ReadOptions{Columns: []*kvpb.Column{{Family: "cf"}}}})
					if kvclient.IsNotFound(err) {
						err = nil
					} else if err == nil && len(r.Cells) == 1 {
						out.value, _ = strconv.ParseInt(string(r.Cells[0].Value), 10, 64)
						seen = out.value
					}
				case regPut:
					_, err = kc.Put(opCtx, &kvpb.PutRequest{Table: "mv", Row: row, Cells: cells})
				case regCAS:
					cond := &kvpb.Condition{Family: "cf", Qualifier: []byte("q"), Value: []byte(strconv.FormatInt(in.expect, 10))}
					if in.expect == 0 {
						cond = &kvpb.Condition{Family: "cf", Qualifier: []byte("q"), Absent: true}
					}
					var r *kvpb.CheckAndPutResponse
					r, err = kc.CheckAndPut(opCtx, &kvpb.CheckAndPutRequest{Table: "mv", Row: row, Condition: cond, Cells: cells})
					if err == nil {
						out.ok = r.Succeeded
					}
				}
				opCancel()
				ret := now()
				if err != nil {
					if in.kind == regGet {
						continue
					}
					out.unknown, ret = true, unknownReturn
				} else {
					settled.Add(1)
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	loadDone := make(chan struct{})
	go func() { wg.Wait(); close(loadDone) }()
	// settle waits until n more operations have settled (or the load
	// ended), so that each move runs under load.
	settle := func(n int64) {
		t.Helper()
		target := settled.Load() + n
		if !testutil.Within(60*time.Second, func() bool {
			select {
			case <-loadDone:
				return true
			default:
				return settled.Load() >= target
			}
		}) {
			t.Fatalf("%d operations settled; want %d", settled.Load(), target)
		}
	}

	// move moves the range to group to; with stopAfter, the mover stops
	// after that step (as if it crashed there), the load runs on a
	// little, and `corral kv move -resume` finishes the move.
	move := func(to, from ring.GroupID, stopAfter string, killSource bool) {
		t.Helper()
		settle(30)
		args := []string{"move", "-endpoints", c.endpoints, "-range", fmt.Sprintf("%#x", token), "-to", fmt.Sprint(uint32(to))}
		if stopAfter != "" {
			out, code := kv(t, append(args, "-stop-after", stopAfter)...)
			if code != 0 || !strings.HasPrefix(out, "stopped after "+stopAfter) {
				t.Fatalf("corral kv move -stop-after %s: exit %d, %q", stopAfter, code, out)
			}
			if mv, pending, err := st.PendingMove(ctx); err != nil || !pending || mv.To != to {
				t.Fatalf("after stopping at %s: pending %v %+v (%v)", stopAfter, pending, mv, err)
			}
			time.Sleep(300 * time.Millisecond) // the load meets the half-done move
			if killSource {
				// SIGKILL the node leading the source RG: the resumed move
				// finds its fence in the new leader's log.
				l, ok, err := st.Leader(ctx, from)
				pid, known := c.pids[l.Addr]
				if err != nil || !ok || !known {
					t.Fatalf("leader of %v: %+v %v %v (pids %v)", from, l, ok, err, c.pids)
				}
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				delete(c.pids, l.Addr)
			}
			args = []string{"move", "-endpoints", c.endpoints, "-resume"}
		}
		out, code := kv(t, args...)
		if code != 0 {
			t.Fatalf("corral kv %v: exit %d, %q", args, code, out)
		}
		if !strings.HasPrefix(out, "moved ") {
			t.Fatalf("corral kv %v printed %q", args, out)
		}
		r, err := st.Ring(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.OwnerOfHash(token) != to {
			t.Fatalf("after the move the ring gives %#x to %v: %v", token, r.OwnerOfHash(token), r)
		}
		if _, pending, err := st.PendingMove(ctx); err != nil || pending {
			t.Fatalf("a move still recorded (%v)", err)
		}
		// Nothing of the range is left in the group it left.
		if n := groupRows(t, ctx, st, from, "mv"); n != 0 {
			t.Fatalf("%d rows of the moved range left in %v", n, from)
		}
		settle(30)
	}
	move(2, 1, "", false)
	move(1, 2, "fence", false)
	move(2, 1, "copy", true)
	move(1, 2, "switch", false)
	// A move stopped after its copy and aborted: the range stays with RG
	// 1, and RG 2's copy is dropped.
	settle(30)
	out, code := kv(t, "move", "-endpoints", c.endpoints, "-range", fmt.Sprintf("%#x", token), "-to", "2", "-stop-after", "copy")
	if code != 0 || !strings.HasPrefix(out, "stopped after copy") {
		t.Fatalf("corral kv move -stop-after copy: exit %d, %q", code, out)
	}
	if out, code := kv(t, "move", "-endpoints", c.endpoints, "-abort"); code != 0 || !strings.HasPrefix(out, "aborted ") {
		t.Fatalf("corral kv move -abort: exit %d, %q", code, out)
	}
	if r, err := st.Ring(ctx); err != nil || r.OwnerOfHash(token) != 1 {
		t.Fatalf("after the abort: %v %v", r, err)
	}
	if _, pending, err := st.PendingMove(ctx); err != nil || pending {
		t.Fatalf("a move still recorded after the abort (%v)", err)
	}
	if n := groupRows(t, ctx, st, 2, "mv"); n != 0 {
		t.Fatalf("%d rows of the aborted move's copy left in rg2", n)
	}
	settle(30)
	stopLoad()
	<-loadDone

	ok, unknown := 0, 0
	for _, op := range history {
		if op.Output.(regOutput).unknown {
			unknown++
		} else {
			ok++
		}
	}
	t.Logf("%d operations (%d with unknown outcome)", ok+unknown, unknown)
	res, info := porcupine.CheckOperationsVerbose(regModel(), history, 60*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history not linearizable (%v): %v", res, info)
	}

	// Every acknowledged put (and successful check-and-put) left its log
	// cell exactly once; no log cell is of a write never sent.
	sent := map[string]bool{}
	must := map[string]bool{}
	for _, op := range history {
		in, out := op.Input.(regInput), op.Output.(regOutput)
		v := strconv.FormatInt(in.value, 10)
		switch {
		case in.kind == regGet:
		case out.unknown:
			sent[v] = true
		case in.kind == regPut || out.ok:
			sent[v], must[v] = true, true
		}
	}
	found := map[string]bool{}
	for _, row := range rows {
		r, err := kc.Get(ctx, &kvpb.GetRequest{Table: "mv", Row: row, Options: &kvpb.ReadOptions{Columns: []*kvpb.Column{{Family: "log"}}, MaxVersions: 4}})
		if err != nil && !kvclient.IsNotFound(err) {
			t.Fatal(err)
		}
		for _, cell := range r.GetCells() {
			q := string(cell.Qualifier)
			if found[q] {
				t.Errorf("put %s applied more than once (row %s)", q, row)
			}
			found[q] = true
			if !sent[q] {
				t.Errorf("row %s holds put %s, which no client acknowledged or left unknown", row, q)
			}
		}
	}
	for v := range must {
		if !found[v] {
			t.Errorf("acknowledged put %s lost", v)
		}
	}
	if len(must) == 0 {
		t.Fatal("no put was acknowledged")
	}
}

// groupRows counts the rows of table a scan of group g's leader returns.
func groupRows(t *testing.T, ctx context.Context, st *cm.Store, g ring.GroupID, table string) int {
	t.Helper()
	n := -1
	var last error
	testutil.Within(30*time.Second, func() bool {
		l, ok, err := st.Leader(ctx, g)
		if err != nil || !ok {
			last = fmt.Errorf("leader of %v: %v %v", g, ok, err)
			return false
		}
		cc, err := grpc.NewClient(l.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			last = err
			return false
		}
		defer cc.Close()
		r, err := kvpb.NewKVClient(cc).Scan(ctx, &kvpb.ScanRequest{Table: table, Group: uint32(g), Limit: 1000})
		if err != nil {
			last = err
			return false
		}
		n = len(r.Rows)
		return true
	})
	if n < 0 {
		t.Fatalf("scan of %v: %v", g, last)
	}
	return n
}

// TestClusterRemoveGroup: `corral kv remove-group 2` on a cluster of two
// RGs moves every range of RG 2 to RG 1 and deregisters RG 2; every row
// written before reads back, and RG 2 holds none of them.
func TestClusterRemoveGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sharded cluster")
	}
	c := startCluster(t, 2, 3, true)
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	st := c.store(t, ctx)
	kc := c.client(t)
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "rm", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	r0, err := st.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 40
	in2 := 0
	for i := range rows {
		row := []byte(fmt.Sprintf("rm%d", i))
		if r0.Owner(row) == 2 {
			in2++
		}
		if _, err := kc.Put(ctx, &kvpb.PutRequest{Table: "rm", Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte(fmt.Sprint(i))}}}); err != nil {
			t.Fatal(err)
		}
	}
	if in2 == 0 {
		t.Fatal("no row in RG 2")
	}
	if n := groupRows(t, ctx, st, 2, "rm"); n != in2 {
		t.Fatalf("RG 2 holds %d rows before, want %d", n, in2)
	}
	leader2, _, err := st.Leader(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	out, code := kv(t, "remove-group", "-endpoints", c.endpoints, "2")
	if code != 0 || !strings.Contains(out, "removed rg2") {
		t.Fatalf("corral kv remove-group 2: exit %d, %q", code, out)
	}
	r, err := st.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Has(2) || r.Len() != r0.Len() {
		t.Fatalf("ring after removing rg2: %v (was %v)", r, r0)
	}
	if _, err := st.Group(ctx, 2); !errors.Is(err, cm.ErrUnregistered) {
		t.Fatalf("rg2's registration: %v, want ErrUnregistered", err)
	}
	for i := range rows {
		row := []byte(fmt.Sprintf("rm%d", i))
		resp, err := kc.Get(ctx, &kvpb.GetRequest{Table: "rm", Row: row})
		if err != nil || len(resp.Cells) != 1 || string(resp.Cells[0].Value) != fmt.Sprint(i) {
			t.Fatalf("row %s after the removal: %v %v", row, resp, err)
		}
	}
	// RG 2's replicas still run: its leader (or the one it names) holds
	// no row.
	addr := leader2.Addr
	n := -1
	testutil.Within(30*time.Second, func() bool {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return false
		}
		defer cc.Close()
		resp, err := kvpb.NewKVClient(cc).Scan(ctx, &kvpb.ScanRequest{Table: "rm", Group: 2, Limit: 1000})
		if err != nil {
			for _, d := range status.Convert(err).Details() {
				if nl, ok := d.(*kvpb.NotLeader); ok && nl.GetLeaderAddress() != "" {
					addr = nl.GetLeaderAddress()
				}
			}
			return false
		}
		n = len(resp.Rows)
		return true
	})
	if n != 0 {
		t.Fatalf("rg2 holds %d rows after its removal (-1: no answer)", n)
	}
}
