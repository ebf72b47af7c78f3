package kv_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/admin/promcheck"
	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/internal/testutil"
	kvstore "github.com/corral-db/corral/kv"
)

// TestLeaderChangeEnsemble: `corral kv ensemble -n 3 -leader-policy
// coolest` with small memtables, under write load, moves its leadership
// (the leader hands over before compacting) and loses no acknowledged
// put: every member comes to apply every one (its metrics' applied zxid
// reaches the highest version a put was acknowledged with), and after an
// orderly stop each member's store holds every one at the version it was
// acknowledged with.
//
// The test waits for the members to apply before stopping because that
// is all the protocol promises: an acknowledged put is committed by a
// quorum, but a follower stopped before the commit reached it holds the
// last entries only in its zab log (pebble runs without its own WAL), to
// be replayed at its next start.
func TestLeaderChangeEnsemble(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 3-member group under load")
	}
	dir := t.TempDir()
	p := startCorral(t, "kv", "ensemble", "-n", "3", "-tick", "100ms", "-dir", dir, "-metrics-port", fmt.Sprint(testport.Range(t, 3)),
		"-leader-policy", "coolest", "-leader-min-interval", "1s", "-memtable-size", "65536", "-log-level", "info")
	printed := p.Await(60*time.Second, "kv endpoints: ", "kv metrics: ")
	endpoints, metrics := printed[0], strings.Split(printed[1], ",")
	eps := strings.Split(endpoints, ",")
	c := tableClient(t, endpoints)
	deadline := time.Now().Add(60 * time.Second)
	load := startWriteLoad(c, 5000, deadline)
	// Leadership must move at least twice.
	leaders := []int{leaderOf(t, eps)}
	testutil.Within(time.Until(deadline), func() bool { // the verdict is below
		if l := leaderOf(t, eps); l != leaders[len(leaders)-1] {
			leaders = append(leaders, l)
		}
		return len(leaders) >= 3
	})
	acked := load.finish()
	if len(leaders) < 3 {
		t.Fatalf("leaders seen %v; want leadership moved twice", leaders)
	}
	if !strings.Contains(p.Output(), "handing leadership over before compacting") {
		t.Fatalf("leadership moved (%v) but no member reports a handover before compacting", leaders)
	}
	last := load.lastVersion()
	t.Logf("leaders %v, %d puts acknowledged, the last at zxid %#x", leaders, len(acked), last)

	applied := make([]uint64, len(metrics))
	testutil.Eventually(t, 30*time.Second, "every member applies every acknowledged put", func() bool {
		done := true
		for i, addr := range metrics {
			if z, ok := appliedZxid(addr); ok {
				applied[i] = z
			}
			done = done && applied[i] >= last
		}
		return done
	})
	t.Logf("members applied %#x", applied)

	// An orderly stop flushes every member; then each store holds every
	// acknowledged row, at the version its put was acknowledged with.
	if err := p.Stop(); err != nil {
		t.Fatalf("ensemble stop: %v", err)
	}
	for m := 1; m <= 3; m++ {
		checkStore(t, filepath.Join(dir, fmt.Sprintf("member%d", m), "kv"), acked, load)
	}
}

// appliedZxid scrapes the member's metrics at addr for the zxid it has
// applied to its store; ok is false if the scrape failed.
func appliedZxid(addr string) (z uint64, ok bool) {
	hc := http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, false
	}
	fams, err := promcheck.Parse(body)
	if err != nil || fams["corral_kv_applied_zxid"] == nil || len(fams["corral_kv_applied_zxid"].Metric) != 1 {
		return 0, false
	}
	return uint64(fams["corral_kv_applied_zxid"].Metric[0].GetGauge().GetValue()), true
}

// checkStore opens the stopped member's store in dir and checks it
// holds every acknowledged row, each cell at the row's acknowledged
// version.
func checkStore(t *testing.T, dir string, acked [][]byte, load *writeLoad) {
	t.Helper()
	s, err := kvstore.Open(kvstore.Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, row := range acked {
		want := load.version(row)
		cells, err := s.Get("t", row, kvstore.ReadOptions{})
		if err != nil || len(cells) != loadCells {
			t.Fatalf("%s: row %s (acknowledged at %#x; store applied %#x): %d cells, %v", dir, row, want, uint64(s.Applied()), len(cells), err)
		}
		for _, cell := range cells {
			if cell.Version != want {
				t.Fatalf("%s: row %s: cell %s:%s at version %#x, acknowledged at %#x", dir, row, cell.Family, cell.Qualifier, cell.Version, want)
			}
		}
	}
}
