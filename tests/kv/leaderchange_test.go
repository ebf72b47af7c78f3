package kv_test

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	endpoints := p.Await(60*time.Second, "kv endpoints: ")[0]
	eps := strings.Split(endpoints, ",")
	c := tableClient(t, endpoints)
	deadline := time.Now().Add(60 * time.Second)
	load := startWriteLoad(c, 5000, deadline)
	// Leadership must move at least twice.
	leaders := []int{leaderOf(t, eps)}
	for len(leaders) < 3 && time.Now().Before(deadline) {
		if l := leaderOf(t, eps); l != leaders[len(leaders)-1] {
			leaders = append(leaders, l)
		}
		time.Sleep(50 * time.Millisecond)
	}
	acked := load.finish()
	if len(leaders) < 3 {
		t.Fatalf("leaders seen %v; want leadership moved twice", leaders)
	}
	if !strings.Contains(p.Output(), "handing leadership over before compacting") {
		t.Fatalf("leadership moved (%v) but no member reports a handover before compacting", leaders)
	}
	t.Logf("leaders %v, %d puts acknowledged", leaders, len(acked))

	// An orderly stop flushes every member; then each store holds every
	// acknowledged row.
	if err := p.Stop(); err != nil {
		t.Fatalf("ensemble stop: %v", err)
	}
	for m := 1; m <= 3; m++ {
		s, err := kvstore.Open(kvstore.Options{Dir: filepath.Join(dir, fmt.Sprintf("member%d", m), "kv"), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range acked {
			cells, err := s.Get("t", row, kvstore.ReadOptions{})
			if err != nil || len(cells) != loadCells {
				s.Close()
				t.Fatalf("member %d, row %s: %d cells, %v", m, row, len(cells), err)
			}
		}
		s.Close()
	}
}
