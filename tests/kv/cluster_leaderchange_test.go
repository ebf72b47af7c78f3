package kv_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/internal/testutil"
)

// TestClusterLeaderChange: `corral kv cluster -leader-policy coolest`
// with small memtables, under write load to both RGs: each RG's leader
// hands over before compacting (its replica runs its own leader change,
// its temperature reports reaching the RG's other replicas through the
// nodes' shared transports), and every acknowledged put reads back.
func TestClusterLeaderChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sharded cluster under load")
	}
	p := startCorral(t, "kv", "cluster", "-groups", "2", "-replicas", "3", "-cm", "1", "-tick", "100ms",
		"-cm-port", strconv.Itoa(testport.Range(t, 3)),
		"-dir", t.TempDir(), "-leader-policy", "coolest", "-leader-min-interval", "1s", "-memtable-size", "65536",
		"-log-level", "info")
	endpoints := p.Await(90*time.Second, "kv endpoints: ")[0]
	kc := tableClient(t, endpoints)
	deadline := time.Now().Add(90 * time.Second)
	load := startWriteLoad(kc, 8000, deadline)
	// both reports whether each RG has handed over before compacting:
	// a log line of that message naming rg=1, and one naming rg=2.
	both := func() bool {
		handover := map[string]bool{}
		for _, l := range p.Lines() {
			if strings.Contains(l, "handing leadership over before compacting") {
				for _, f := range strings.Fields(l) {
					if strings.HasPrefix(f, "rg=") {
						handover[f] = true
					}
				}
			}
		}
		return handover["rg=1"] && handover["rg=2"]
	}
	handedOver := testutil.Within(time.Until(deadline), both)
	acked := load.finish()
	if !handedOver {
		t.Fatalf("not every RG handed over before compacting")
	}
	t.Logf("%d puts acknowledged", len(acked))
	got := map[string]int{} // row -> cells read
	for i := 0; i < len(acked); i += 1000 {
		resp, err := kc.MultiGet(context.Background(), &kvpb.MultiGetRequest{Table: "t", Rows: acked[i:min(i+1000, len(acked))]})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.GetRows() {
			got[string(r.GetKey())] = len(r.GetCells())
		}
	}
	for _, row := range acked {
		if got[string(row)] != loadCells {
			t.Fatalf("acknowledged row %s: %d cells read, want %d", row, got[string(row)], loadCells)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("cluster stop: %v", err)
	}
}
