package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/client/kvclient"
	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// cluster is a running `corral kv cluster -spawn`: its storage nodes are
// processes of their own, which the test may SIGKILL.
type cluster struct {
	endpoints string
	cm        string
	dir       string
	pids      map[string]int // node API address -> pid
	nodes     map[string]int // node API address -> N (its dir is nodeN)
}

func startCluster(t *testing.T, groups, replicas int, spawn bool) *cluster {
	t.Helper()
	dir := t.TempDir()
	args := []string{"kv", "cluster", "-groups", fmt.Sprint(groups), "-replicas", fmt.Sprint(replicas),
		"-cm", "1", "-cm-port", strconv.Itoa(testport.Range(t, 3)), "-tick", "100ms", "-dir", dir}
	if spawn {
		args = append(args, "-spawn")
	}
	p := startCorral(t, args...)
	c := &cluster{dir: dir, pids: map[string]int{}, nodes: map[string]int{}}
	found := p.Await(90*time.Second, "kv endpoints: ", "configuration manager: ")
	c.endpoints, c.cm = found[0], found[1]
	// The node lines come before the endpoints: "kv node N: pid P api ADDR".
	for _, l := range p.Lines() {
		var n, pid int
		var api string
		if _, err := fmt.Sscanf(l, "kv node %d: pid %d api %s", &n, &pid, &api); err == nil {
			c.pids[api], c.nodes[api] = pid, n
		}
	}
	if spawn && len(c.pids) != replicas {
		t.Fatalf("%d node lines for %d nodes", len(c.pids), replicas)
	}
	return c
}

// store is the cluster's configuration manager, through a session that
// is closed when the test ends.
func (c *cluster) store(t *testing.T, ctx context.Context) *cm.Store {
	t.Helper()
	conn, err := client.Connect(ctx, strings.Split(c.cm, ","), client.SessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	st, err := cm.NewStore(conn, "")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// client is a kv client of the cluster's nodes, closed when the test ends.
func (c *cluster) client(t *testing.T) *kvclient.Client {
	t.Helper()
	kc, err := kvclient.New(kvclient.Config{Endpoints: strings.Split(c.endpoints, ","), RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kc.Close() })
	return kc
}

// firstRange returns the first token of group in the ring and the range
// it starts: a range the group owns, for a test to move.
func firstRange(t *testing.T, ctx context.Context, st *cm.Store, group ring.GroupID) (uint64, ring.Range) {
	t.Helper()
	r, err := st.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range r.Tokens() {
		if tk.Group == group {
			rg, owner := r.RangeOfHash(tk.Token)
			if owner != group {
				t.Fatalf("token %#x owned by %v in %v", tk.Token, owner, r)
			}
			return tk.Token, rg
		}
	}
	t.Fatalf("group %v has no token in %v", group, r)
	return 0, ring.Range{}
}

// clusterWait bounds one wait of a cluster test for the cluster to reach
// a state (leaders handed over or balanced, writes acknowledged); each
// test's context bounds the test as a whole.
const clusterWait = 60 * time.Second

// TestClusterLeaderKill: two RGs of three on three node processes;
// clients write rows of both RGs while the node leading RG 1 (and not RG
// 2) is SIGKILLed. Every acknowledged write is there afterwards, RG 2
// kept its leader and epoch, RG 1's new leader recorded a newer epoch,
// and the deposed leader's record, written again, is refused.
func TestClusterLeaderKill(t *testing.T) {
	c := startCluster(t, 2, 3, true)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	st := c.store(t, ctx)
	leaderOf := func(g ring.GroupID) cm.Leader {
		l, ok, err := st.Leader(ctx, g)
		if err != nil || !ok {
			t.Fatalf("leader of %v: %v %v", g, ok, err)
		}
		return l
	}
	// A fresh cluster hands each RG's leadership to its preferred node:
	// wait until the two RGs are led from different nodes.
	var l1, l2 cm.Leader
	testutil.Eventually(t, clusterWait, "the two RGs led from different nodes", func() bool {
		l1, l2 = leaderOf(1), leaderOf(2)
		return l1.Addr != l2.Addr
	})
	r, err := st.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}

	kc, err := kvclient.New(kvclient.Config{Endpoints: strings.Split(c.endpoints, ","), RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}

	// Writers: each writes its own rows in sequence until stopped (at
	// most 2000 each); acked holds every acknowledged row.
	var (
		mu      sync.Mutex
		acked   = map[string]string{}
		perRG   = map[ring.GroupID]int{}
		errs    []error
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		writers = 6
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				row := fmt.Sprintf("w%d-%04d", w, i)
				val := fmt.Sprintf("v%d", i)
				_, err := kc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte(row), Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: []byte(val)}}})
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("put %s: %w", row, err))
				} else {
					acked[row] = val
					perRG[r.Owner([]byte(row))]++
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	count := func(g ring.GroupID) int {
		mu.Lock()
		defer mu.Unlock()
		return perRG[g]
	}
	waitCount := func(g ring.GroupID, n int) {
		testutil.Eventually(t, clusterWait, fmt.Sprintf("%v: %d writes acknowledged", g, n), func() bool {
			return count(g) >= n
		})
	}
	waitCount(1, 50)
	waitCount(2, 50)

	victim, ok := c.pids[l1.Addr]
	if !ok {
		t.Fatalf("no node process at %s", l1.Addr)
	}
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGKILLed node %s (pid %d), leader of rg1 in epoch %d; rg2 led from %s", l1.Addr, victim, l1.Epoch, l2.Addr)
	before1, before2 := count(1), count(2)
	// Writes go on to both RGs: RG 1 under its next leader.
	waitCount(1, before1+100)
	waitCount(2, before2+100)
	close(stop)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}

	n1 := leaderOf(1)
	if n1.Epoch <= l1.Epoch || n1.Addr == l1.Addr {
		t.Errorf("rg1's leader after the kill: %+v; before: %+v", n1, l1)
	}
	if n2 := leaderOf(2); n2 != l2 {
		t.Errorf("rg2's leader changed: %+v, was %+v", n2, l2)
	}
	// The deposed leader writing its record again is refused.
	if err := st.RecordLeader(ctx, 1, l1); !errors.Is(err, cm.ErrStaleEpoch) {
		t.Errorf("stale leader record of rg1: %v, want ErrStaleEpoch", err)
	}
	// (The balancer may move RG 1 on meanwhile: its epoch only grows.)
	if got := leaderOf(1); got.Epoch < n1.Epoch || got.Addr == l1.Addr {
		t.Errorf("rg1's record after the stale write: %+v, was %+v", got, n1)
	}

	// Every acknowledged write is there, read through the router (a
	// multi-get split by RG, and a scan merging both).
	mu.Lock()
	rows := make([][]byte, 0, len(acked))
	for row := range acked {
		rows = append(rows, []byte(row))
	}
	mu.Unlock()
	got := map[string]string{}
	for i := 0; i < len(rows); i += 1000 {
		resp, err := kc.MultiGet(ctx, &kvpb.MultiGetRequest{Table: "t", Rows: rows[i:min(i+1000, len(rows))]})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.GetRows() {
			got[string(r.GetKey())] = string(r.GetCells()[0].GetValue())
		}
	}
	for row, val := range acked {
		if got[row] != val {
			t.Errorf("acknowledged %s=%s, read %q", row, val, got[row])
		}
	}
	sc, err := kc.Scan(ctx, &kvpb.ScanRequest{Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.GetRows()) < min(len(acked), 10000) {
		t.Errorf("scan: %d rows, %d acknowledged", len(sc.GetRows()), len(acked))
	}
	for i := 1; i < len(sc.GetRows()); i++ {
		if bytes.Compare(sc.Rows[i-1].Key, sc.Rows[i].Key) >= 0 {
			t.Fatalf("scan out of order at %d", i)
		}
	}
	t.Logf("%d writes acknowledged (rg1 %d, rg2 %d), all present", len(acked), count(1), count(2))
}

// TestClusterAnswers: `corral kv cluster` in one process; the client
// commands work through the ring, and a node answers the typed routing
// errors: NotLeader (RG, leader, epoch) from a replica that does not
// lead, WrongRange (with the ring version) for an RG it does not host.
// On the same cluster, DropTable reaches every RG (testClusterDropTable).
func TestClusterAnswers(t *testing.T) {
	c := startCluster(t, 2, 3, false)
	eps := strings.Split(c.endpoints, ",")
	if _, code := kv(t, "create-table", "-endpoints", c.endpoints, "t", "cf"); code != 0 {
		t.Fatalf("create-table: exit %d", code)
	}
	for i := range 8 {
		if _, code := kv(t, "put", "-endpoints", eps[i%len(eps)], "t", fmt.Sprintf("row%d", i), fmt.Sprintf("cf:q=v%d", i)); code != 0 {
			t.Fatalf("put row%d: exit %d", i, code)
		}
	}
	out, code := kv(t, "get", "-endpoints", c.endpoints, "t", "row5")
	if code != 0 || out != "cf:q=v5\n" {
		t.Fatalf("get: %q exit %d", out, code)
	}
	out, code = kv(t, "scan", "-endpoints", c.endpoints, "t")
	want := ""
	for i := range 8 {
		want += fmt.Sprintf("row%d cf:q=v%d\n", i, i)
	}
	if code != 0 || out != want {
		t.Fatalf("scan: %q exit %d, want %q", out, code, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := c.store(t, ctx)
	r, err := st.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The rows went to both RGs.
	owners := map[ring.GroupID]bool{}
	for i := range 8 {
		owners[r.Owner([]byte(fmt.Sprintf("row%d", i)))] = true
	}
	if len(owners) != 2 {
		t.Fatalf("rows of %d RGs: the ring does not spread 8 rows", len(owners))
	}
	row := []byte("row0")
	g := r.Owner(row)
	// A fresh RG may still be handing its leadership to its preferred
	// node: ask again until the answer and the record agree.
	var raw kvpb.KVClient
	testutil.EventuallyNoError(t, 20*time.Second, fmt.Sprintf("a follower of %v names its leader", g), func() error {
		l, ok, err := st.Leader(ctx, g)
		if err != nil || !ok {
			t.Fatalf("leader of %v: %v %v", g, ok, err)
		}
		var follower string
		for _, e := range eps {
			if e != l.Addr {
				follower = e
				break
			}
		}
		cc, err := grpc.NewClient(follower, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		raw = kvpb.NewKVClient(cc)
		_, err = raw.Get(ctx, &kvpb.GetRequest{Table: "t", Row: row})
		nl, ok := kvclient.NotLeader(err)
		if status.Code(err) == codes.Unavailable && ok && nl.GetGroup() == uint32(g) && nl.GetLeaderAddress() == l.Addr && uint64(nl.GetEpoch()) == l.Epoch {
			t.Cleanup(func() { cc.Close() })
			return nil
		}
		cc.Close()
		return fmt.Errorf("get from a follower: %v (detail %v), want NotLeader naming %+v", err, nl, l)
	})
	_, err = raw.Scan(ctx, &kvpb.ScanRequest{Table: "t", Group: 7})
	var wr *kvpb.WrongRange
	if s, ok := status.FromError(err); ok {
		for _, d := range s.Details() {
			if d, ok := d.(*kvpb.WrongRange); ok {
				wr = d
			}
		}
	}
	if status.Code(err) != codes.OutOfRange || wr == nil || wr.GetGroup() != 7 || wr.GetRingVersion() != r.Version() {
		t.Fatalf("scan of an RG the node does not host: %v (detail %v), want WrongRange at ring v%d", err, wr, r.Version())
	}
	// Server-side forwarding: the same follower, asked to forward,
	// answers from the leader.
	fctx := metadata.AppendToOutgoingContext(ctx, kvpb.ForwardHeader, "1")
	if resp, err := raw.Get(fctx, &kvpb.GetRequest{Table: "t", Row: row}); err != nil || string(resp.GetCells()[0].GetValue()) != "v0" {
		t.Fatalf("forwarded get: %v %v", resp, err)
	}
	// A client that forwards through one endpoint reaches both RGs.
	fc, err := kvclient.New(kvclient.Config{Endpoints: eps[:1], Forward: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	for i := range 8 {
		row := []byte(fmt.Sprintf("fwd%d", i))
		if _, err := fc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: row}}}); err != nil {
			t.Fatalf("forwarded put %s: %v", row, err)
		}
		if resp, err := fc.Get(ctx, &kvpb.GetRequest{Table: "t", Row: row}); err != nil || !bytes.Equal(resp.GetCells()[0].GetValue(), row) {
			t.Fatalf("forwarded get %s: %v %v", row, resp, err)
		}
	}
	info, err := raw.Cluster(ctx, &kvpb.ClusterRequest{})
	if err != nil || info.GetCmConnect() != c.cm || info.GetRingVersion() != r.Version() || len(info.GetGroups()) != 2 {
		t.Fatalf("cluster info: %v %v", info, err)
	}
	t.Run("DropTable", func(t *testing.T) { testClusterDropTable(t, eps, r) })
}

// testClusterDropTable: a table with rows in every RG, dropped through
// the client (which drops it in each RG in turn), is gone from every RG:
// each refuses a scan and a put of it, and a second drop answers that
// it does not exist. Created again, it starts empty in every RG.
func testClusterDropTable(t *testing.T, eps []string, r *ring.Ring) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kc, err := kvclient.New(kvclient.Config{Endpoints: eps, RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	const table = "dropped"
	create := &kvpb.CreateTableRequest{Table: table, Families: []*kvpb.Family{{Name: "cf"}}}
	if _, err := kc.CreateTable(ctx, create); err != nil {
		t.Fatal(err)
	}
	put := func(row []byte) error {
		_, err := kc.Put(ctx, &kvpb.PutRequest{Table: table, Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: row}}})
		return err
	}
	// scanRG scans the table in RG g alone (the client sends a scan
	// naming an RG to that RG's leader).
	scanRG := func(g ring.GroupID) ([]*kvpb.Row, error) {
		resp, err := kc.Scan(ctx, &kvpb.ScanRequest{Table: table, Group: uint32(g)})
		return resp.GetRows(), err
	}
	noTable := func(err error) bool {
		return status.Code(err) == codes.InvalidArgument && strings.Contains(err.Error(), "no such table")
	}

	// Three rows in every RG.
	groups := r.Groups()
	rows := map[ring.GroupID][][]byte{}
	short := func(g ring.GroupID) bool { return len(rows[g]) < 3 }
	for i := 0; slices.ContainsFunc(groups, short); i++ {
		if i == 1000 {
			t.Fatalf("1000 rows do not give every RG three (ring %v)", r)
		}
		row := []byte(fmt.Sprintf("d%03d", i))
		if g := r.Owner(row); len(rows[g]) < 3 {
			if err := put(row); err != nil {
				t.Fatalf("put %s: %v", row, err)
			}
			rows[g] = append(rows[g], row)
		}
	}
	for _, g := range groups {
		got, err := scanRG(g)
		if err != nil || len(got) != 3 {
			t.Fatalf("%v before the drop: %d rows, %v; want 3", g, len(got), err)
		}
	}

	if _, err := kc.DropTable(ctx, &kvpb.DropTableRequest{Table: table}); err != nil {
		t.Fatalf("drop: %v", err)
	}
	for _, g := range groups {
		if got, err := scanRG(g); !noTable(err) {
			t.Errorf("%v: scan of the dropped table: %d rows, %v; want no such table", g, len(got), err)
		}
		if err := put(rows[g][0]); !noTable(err) {
			t.Errorf("%v: put to the dropped table: %v; want no such table", g, err)
		}
	}
	if _, err := kc.DropTable(ctx, &kvpb.DropTableRequest{Table: table}); !noTable(err) {
		t.Errorf("second drop: %v; want no such table", err)
	}

	if _, err := kc.CreateTable(ctx, create); err != nil {
		t.Fatalf("create again: %v", err)
	}
	for _, g := range groups {
		if got, err := scanRG(g); err != nil || len(got) != 0 {
			t.Errorf("%v: the table created again: %d rows, %v; want none", g, len(got), err)
		}
		if _, err := kc.Get(ctx, &kvpb.GetRequest{Table: table, Row: rows[g][0]}); !kvclient.IsNotFound(err) {
			t.Errorf("%v: get of a row from before the drop: %v; want not found", g, err)
		}
	}
}

// TestClusterBalance: three RGs on three node processes. The node leading
// RG 1 is SIGKILLed, so the other two lead all three RGs between them;
// restarted, it has none, two fewer than one of the others, and the leader
// balancer hands it one: every node ends up leading one RG.
func TestClusterBalance(t *testing.T) {
	c := startCluster(t, 3, 3, true)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	st := c.store(t, ctx)
	leaders := func() map[ring.GroupID]cm.Leader {
		out := map[ring.GroupID]cm.Leader{}
		for g := ring.GroupID(1); g <= 3; g++ {
			l, ok, err := st.Leader(ctx, g)
			if err != nil || !ok {
				t.Fatalf("leader of %v: %v %v", g, ok, err)
			}
			out[g] = l
		}
		return out
	}
	oneEach := func(ls map[ring.GroupID]cm.Leader) bool {
		seen := map[string]bool{}
		for _, l := range ls {
			seen[l.Addr] = true
		}
		return len(seen) == 3
	}
	waitFor := func(what string, cond func(map[ring.GroupID]cm.Leader) bool) map[ring.GroupID]cm.Leader {
		var ls map[ring.GroupID]cm.Leader
		testutil.EventuallyNoError(t, clusterWait, what, func() error {
			if ls = leaders(); !cond(ls) {
				return fmt.Errorf("leaders %+v", ls)
			}
			return nil
		})
		return ls
	}
	before := waitFor("one leader per node at start", oneEach)
	victim := before[1]
	if err := syscall.Kill(c.pids[victim.Addr], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor("RG 1 led elsewhere", func(ls map[ring.GroupID]cm.Leader) bool { return ls[1].Epoch > victim.Epoch })
	n := c.nodes[victim.Addr]
	startCorral(t, "kv", "node", "-config", fmt.Sprintf("%s/node%d/node.json", c.dir, n))
	after := waitFor("one leader per node after the restart", oneEach)
	if after[1].Addr == victim.Addr && after[2].Addr == before[2].Addr && after[3].Addr == before[3].Addr && after[1].Epoch == victim.Epoch {
		t.Fatalf("nothing moved: %+v", after)
	}
	t.Logf("leaders before %+v, after %+v", before, after)
}
