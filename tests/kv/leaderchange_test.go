package kv_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
	kvstore "github.com/corral-db/corral/kv"
)

// TestLeaderChangeEnsemble: `corral kv ensemble -n 3 -leader-policy
// coolest` with small memtables, under write load, moves its leadership
// (the leader hands over before compacting) and loses no acknowledged
// put: after an orderly stop every member's store holds every one.
func TestLeaderChangeEnsemble(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 3-member group under load")
	}
	dir := t.TempDir()
	p := startCorral(t, "kv", "ensemble", "-n", "3", "-tick", "100ms", "-dir", dir,
		"-leader-policy", "coolest", "-leader-min-interval", "1s", "-memtable-size", "65536", "-log-level", "info")
	endpoints := p.await(60*time.Second, "kv endpoints: ")[0]
	eps := strings.Split(endpoints, ",")
	c, err := kvclient.New(kvclient.Config{Endpoints: eps, RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &kvpb.CreateTableRequest{Table: "t", Families: []*kvpb.Family{{Name: "cf"}}}); err != nil {
		t.Fatal(err)
	}

	var (
		wg    sync.WaitGroup
		amu   sync.Mutex
		acked []string
	)
	stop := make(chan struct{})
	deadline := time.Now().Add(60 * time.Second)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000 && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				row := fmt.Sprintf("w%d-%05d", w, i)
				var cells []*kvpb.Cell
				for q := 0; q < 10; q++ {
					cells = append(cells, &kvpb.Cell{Family: "cf", Qualifier: []byte(fmt.Sprint(q)), Value: bytes.Repeat([]byte{byte('a' + q)}, 100)})
				}
				if _, err := c.Put(ctx, &kvpb.PutRequest{Table: "t", Row: []byte(row), Cells: cells}); err == nil {
					amu.Lock()
					acked = append(acked, row)
					amu.Unlock()
				}
			}
		}()
	}
	// Leadership must move at least twice.
	leaders := []int{leaderOf(t, eps)}
	for len(leaders) < 3 && time.Now().Before(deadline) {
		if l := leaderOf(t, eps); l != leaders[len(leaders)-1] {
			leaders = append(leaders, l)
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if len(leaders) < 3 {
		t.Fatalf("leaders seen %v; want leadership moved twice", leaders)
	}
	if !strings.Contains(p.output(), "handing leadership over before compacting") {
		t.Fatalf("leadership moved (%v) but no member reports a handover before compacting", leaders)
	}
	t.Logf("leaders %v, %d puts acknowledged", leaders, len(acked))

	// An orderly stop flushes every member; then each store holds every
	// acknowledged row.
	if err := p.stop(); err != nil {
		t.Fatalf("ensemble stop: %v", err)
	}
	for m := 1; m <= 3; m++ {
		s, err := kvstore.Open(kvstore.Options{Dir: filepath.Join(dir, fmt.Sprintf("member%d", m), "kv"), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range acked {
			cells, err := s.Get("t", []byte(row), kvstore.ReadOptions{})
			if err != nil || len(cells) != 10 {
				s.Close()
				t.Fatalf("member %d, row %s: %d cells, %v", m, row, len(cells), err)
			}
		}
		s.Close()
	}
}
