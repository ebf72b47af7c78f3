package kv_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
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
	cmd := exec.Command(corralBin, "kv", "cluster", "-groups", "2", "-replicas", "3", "-cm", "1", "-tick", "100ms",
		"-dir", t.TempDir(), "-leader-policy", "coolest", "-leader-min-interval", "1s", "-memtable-size", "65536",
		"-log-level", "info")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		lmu      sync.Mutex
		logs     strings.Builder
		handover = map[string]bool{} // "rg=N" of each RG that handed over before compacting
	)
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			l := sc.Text()
			lmu.Lock()
			if logs.Len() < 1<<20 {
				logs.WriteString(l + "\n")
			}
			if strings.Contains(l, "handing leadership over before compacting") {
				for _, f := range strings.Fields(l) {
					if strings.HasPrefix(f, "rg=") {
						handover[f] = true
					}
				}
			}
			lmu.Unlock()
		}
	}()
	stderr := func() string {
		lmu.Lock()
		defer lmu.Unlock()
		return logs.String()
	}
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			<-stderrDone
			cmd.Wait()
		}
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "kv endpoints: "); ok {
				found <- e
			}
		}
	}()
	var endpoints string
	select {
	case endpoints = <-found:
	case <-time.After(90 * time.Second):
		t.Fatalf("no endpoints line; stderr:\n%s", stderr())
	}
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
	both := func() bool {
		lmu.Lock()
		defer lmu.Unlock()
		return handover["rg=1"] && handover["rg=2"]
	}
	for !both() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if !both() {
		t.Fatalf("not every RG handed over before compacting; stderr:\n%s", stderr())
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
	cmd.Process.Signal(syscall.SIGINT)
	<-stderrDone
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cluster stop: %v; stderr:\n%s", err, stderr())
	}
	stopped = true
}
