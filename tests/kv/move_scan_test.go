package kv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/kv/ring"
)

// TestClusterScanDuringMove: with a move of one of RG 1's ranges stopped
// after its copy (`corral kv move -stop-after copy`), the range's rows
// are in both RGs (an unfiltered scan of RG 2 shows the copies), and a
// client's scan of the table returns every row exactly once; likewise
// after the move is resumed (switch and drop).
func TestClusterScanDuringMove(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sharded cluster")
	}
	c := startCluster(t, 2, 1, false)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	st := c.store(t, ctx)
	token, rg := firstRange(t, ctx, st, 1)
	kc := c.client(t)
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "sc", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}
	const n = 200
	moved := 0
	for i := range n {
		row := []byte(fmt.Sprintf("sc%04d", i))
		if rg.Contains(ring.Hash(row)) {
			moved++
		}
		if _, err := kc.Put(ctx, &kvpb.PutRequest{Table: "sc", Row: row, Cells: []*kvpb.Cell{{Family: "cf", Qualifier: []byte("q"), Value: row}}}); err != nil {
			t.Fatal(err)
		}
	}
	if moved == 0 {
		t.Fatalf("no row of %d in the moved range %v", n, rg)
	}
	before := groupRows(t, ctx, st, 2, "sc")
	out, code := kv(t, "move", "-endpoints", c.endpoints, "-range", fmt.Sprintf("%#x", token), "-to", "2", "-stop-after", "copy")
	if code != 0 || !strings.HasPrefix(out, "stopped after copy") {
		t.Fatalf("corral kv move -stop-after copy: exit %d, %q", code, out)
	}
	if after := groupRows(t, ctx, st, 2, "sc"); after != before+moved {
		t.Fatalf("rg2's store holds %d rows after the copy, want %d + %d copied", after, before, moved)
	}
	scanOnce := func(what string) {
		t.Helper()
		resp, err := kc.Scan(ctx, &kvpb.ScanRequest{Table: "sc"})
		if err != nil {
			t.Fatalf("%s: scan: %v", what, err)
		}
		seen := map[string]int{}
		for _, r := range resp.GetRows() {
			seen[string(r.GetKey())]++
		}
		for i := range n {
			if k := fmt.Sprintf("sc%04d", i); seen[k] != 1 {
				t.Fatalf("%s: row %s returned %d times", what, k, seen[k])
			}
		}
		if len(resp.GetRows()) != n {
			t.Fatalf("%s: %d rows, want %d", what, len(resp.GetRows()), n)
		}
	}
	scanOnce("move stopped after the copy")
	if out, code := kv(t, "move", "-endpoints", c.endpoints, "-resume"); code != 0 {
		t.Fatalf("corral kv move -resume: exit %d, %q", code, out)
	}
	scanOnce("move done")
}
