package kv_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
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
		"-dir", t.TempDir(), "-leader-policy", "coolest", "-leader-min-interval", "1s", "-memtable-size", "65536",
		"-log-level", "info")
	endpoints := p.await(90*time.Second, "kv endpoints: ")[0]
	kc, err := kvclient.New(kvclient.Config{Endpoints: strings.Split(endpoints, ","), RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ctx := context.Background()
	if _, err := kc.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}

	var (
		wg    sync.WaitGroup
		amu   sync.Mutex
		acked [][]byte
	)
	stop := make(chan struct{})
	deadline := time.Now().Add(90 * time.Second)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 8000 && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				row := []byte(fmt.Sprintf("w%d-%05d", w, i))
				var cells []*kvpb.Cell
				for q := 0; q < 10; q++ {
					cells = append(cells, &kvpb.Cell{Family: "cf", Qualifier: []byte(fmt.Sprint(q)), Value: bytes.Repeat(row, 10)})
				}
				if _, err := kc.Put(ctx, &kvpb.PutRequest{Table: "t", Row: row, Cells: cells}); err == nil {
					amu.Lock()
					acked = append(acked, row)
					amu.Unlock()
				}
			}
		}()
	}
	// both reports whether each RG has handed over before compacting:
	// a log line of that message naming rg=1, and one naming rg=2.
	both := func() bool {
		handover := map[string]bool{}
		for _, l := range p.lines() {
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
	close(stop)
	wg.Wait()
	if !handedOver {
		t.Fatalf("not every RG handed over before compacting")
	}
	t.Logf("%d puts acknowledged", len(acked))
	got := map[string]int{} // row -> cells read
	for i := 0; i < len(acked); i += 1000 {
		resp, err := kc.MultiGet(ctx, &kvpb.MultiGetRequest{Table: "t", Rows: acked[i:min(i+1000, len(acked))]})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.GetRows() {
			got[string(r.GetKey())] = len(r.GetCells())
		}
	}
	for _, row := range acked {
		if got[string(row)] != 10 {
			t.Fatalf("acknowledged row %s: %d cells read, want 10", row, got[string(row)])
		}
	}
	if err := p.stop(); err != nil {
		t.Fatalf("cluster stop: %v", err)
	}
}
