package kv_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
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
	cmd := exec.Command(corralBin, "kv", "ensemble", "-n", "3", "-tick", "100ms", "-dir", dir,
		"-leader-policy", "coolest", "-leader-min-interval", "1s", "-memtable-size", "65536", "-log-level", "info")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
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
	case <-time.After(60 * time.Second):
		t.Fatalf("no endpoints line; stderr:\n%s", stderr.String())
	}
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
		t.Fatalf("leaders seen %v; want leadership moved twice; stderr:\n%s", leaders, stderr.String())
	}
	if !strings.Contains(stderr.String(), "handing leadership over before compacting") {
		t.Fatalf("leadership moved (%v) but no member reports a handover before compacting; stderr:\n%s", leaders, stderr.String())
	}
	t.Logf("leaders %v, %d puts acknowledged", leaders, len(acked))

	// An orderly stop flushes every member; then each store holds every
	// acknowledged row.
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ensemble stop: %v; stderr:\n%s", err, stderr.String())
	}
	stopped = true
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
