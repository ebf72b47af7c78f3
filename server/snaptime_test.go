package server

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/internal/metric"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/vfs"
)

// mntrValues parses mntr's "zk_<name>\t<value>" lines.
func mntrValues(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			m[k] = v
		}
	}
	return m
}

// TestMntrSnapshotTime: mntr reports the snapshots' durations under
// ZooKeeper 3.9's names (zk_avg/min/max/cnt/sum_snapshottime, in ms): none
// on a fresh server, and one more for each snapshot written.
func TestMntrSnapshotTime(t *testing.T) {
	ts := startServer(t, Options{FS: vfs.NewMem(), DataDir: "/data", SnapCount: 20, PreallocSize: 1 << 20,
		FourLetterWords: map[string]bool{"mntr": true}})
	keys := []string{"zk_avg_snapshottime", "zk_min_snapshottime", "zk_max_snapshottime", "zk_cnt_snapshottime", "zk_sum_snapshottime"}
	out, err := fourLetter(ts.addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	m := mntrValues(t, out)
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			t.Fatalf("mntr lacks %s:\n%s", k, out)
		}
		if v != "0" && v != "0.0" {
			t.Errorf("fresh server: %s = %s, want 0", k, v)
		}
	}

	c := dial(t, ts.addr)
	// More than snapCount writes: at least one snapshot is due.
	for i := range 60 {
		if _, code := c.create(fmt.Sprintf("/n%02d", i), []byte("x"), 0); code != 0 {
			t.Fatalf("create: %v", code)
		}
	}
	testutil.Eventually(t, 10*time.Second, "a snapshot written after 60 writes with snapCount 20", func() bool {
		n, _, _, _ := ts.store.snapTimes.get()
		return n > 0 && !ts.store.snapping.Load()
	})
	out, err = fourLetter(ts.addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	m = mntrValues(t, out)
	num := func(k string) float64 {
		v, err := strconv.ParseFloat(m[k], 64)
		if err != nil {
			t.Fatalf("%s = %q: %v\n%s", k, m[k], err, out)
		}
		return v
	}
	cnt, sum, lo, hi, avg := num("zk_cnt_snapshottime"), num("zk_sum_snapshottime"),
		num("zk_min_snapshottime"), num("zk_max_snapshottime"), num("zk_avg_snapshottime")
	if n, _, _, _ := ts.store.snapTimes.get(); cnt < 1 || cnt > float64(n) {
		t.Errorf("zk_cnt_snapshottime %v, want 1 to %d", cnt, n)
	}
	if lo > hi || sum < hi || avg < lo || avg > hi {
		t.Errorf("inconsistent summary: min %v max %v sum %v avg %v", lo, hi, sum, avg)
	}
	// The snapshots are counted by kind (corral_snapshots_total{kind});
	// mntr prints the members as ZooKeeper prints a CounterSet's.
	if busy := num("zk_busy_corral_snapshots_total"); busy < cnt {
		t.Errorf("zk_busy_corral_snapshots_total %v, want at least the %v snapshots timed", busy, cnt)
	}
	if idle, ckpt := num("zk_idle_corral_snapshots_total"), num("zk_checkpoint_corral_snapshots_total"); idle != 0 || ckpt != 0 {
		t.Errorf("sync mode: idle %v and checkpoint %v snapshots, want 0", idle, ckpt)
	}
	if !strings.Contains(m["zk_avg_snapshottime"], ".") {
		t.Errorf("zk_avg_snapshottime %q is not printed as a double, as ZooKeeper prints it", m["zk_avg_snapshottime"])
	}
}

// TestSnapTimeSummary: whole milliseconds, extremes and total.
func TestSnapTimeSummary(t *testing.T) {
	s := msSummary{s: metric.NewRegistry(nil).Summary("snapshottime", "", metric.DetailBasic)}
	for _, d := range []time.Duration{30 * time.Millisecond, 1500 * time.Microsecond, 200*time.Millisecond + 999*time.Microsecond} {
		s.add(d)
	}
	if n, sum, lo, hi := s.get(); n != 3 || sum != 231 || lo != 1 || hi != 200 {
		t.Errorf("got count %d sum %d min %d max %d, want 3 231 1 200", n, sum, lo, hi)
	}
}

// TestMntrFsyncTime: mntr reports the log fsyncs under ZooKeeper 3.9's
// names (zk_*_fsynctime), and acknowledged writes in sync mode are counted.
func TestMntrFsyncTime(t *testing.T) {
	ts := startServer(t, Options{FS: vfs.NewMem(), DataDir: "/data", PreallocSize: 1 << 20,
		FourLetterWords: map[string]bool{"mntr": true}})
	count := func() float64 {
		out, err := fourLetter(ts.addr, "mntr")
		if err != nil {
			t.Fatal(err)
		}
		m := mntrValues(t, out)
		for _, k := range []string{"zk_avg_fsynctime", "zk_min_fsynctime", "zk_max_fsynctime", "zk_sum_fsynctime"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("mntr lacks %s:\n%s", k, out)
			}
		}
		v, err := strconv.ParseFloat(m["zk_cnt_fsynctime"], 64)
		if err != nil {
			t.Fatalf("zk_cnt_fsynctime %q: %v", m["zk_cnt_fsynctime"], err)
		}
		return v
	}
	before := count()
	c := dial(t, ts.addr)
	for i := 0; i < 3; i++ {
		if _, code := c.create(fmt.Sprintf("/f%d", i), []byte("x"), 0); code != 0 {
			t.Fatalf("create: %v", code)
		}
	}
	if after := count(); after <= before {
		t.Fatalf("zk_cnt_fsynctime %v after three acknowledged creates, was %v", after, before)
	}
}

// TestMntrHeapPerZnode: mntr reports the live heap and its share per
// znode; after a collection the live heap holds at least the tree's
// paths and data.
func TestMntrHeapPerZnode(t *testing.T) {
	ts := startServer(t, Options{FS: vfs.NewMem(), DataDir: "/data", PreallocSize: 1 << 20,
		FourLetterWords: map[string]bool{"mntr": true}})
	c := dial(t, ts.addr)
	data := make([]byte, 4096)
	for i := range 50 {
		if _, code := c.create(fmt.Sprintf("/m%02d", i), data, 0); code != 0 {
			t.Fatalf("create: %v", code)
		}
	}
	runtime.GC()
	out, err := fourLetter(ts.addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	m := mntrValues(t, out)
	num := func(k string) int64 {
		v, err := strconv.ParseInt(m[k], 10, 64)
		if err != nil {
			t.Fatalf("%s = %q: %v\n%s", k, m[k], err, out)
		}
		return v
	}
	live, per, raw := num("zk_heap_live_bytes"), num("zk_heap_live_bytes_per_znode"), num("zk_approximate_data_size")
	ts.mu.RLock()
	nodes := int64(ts.tree.NodeCount())
	ts.mu.RUnlock()
	if live < raw || per != live/nodes {
		t.Errorf("heap_live_bytes %d (data %d), per znode %d for %d znodes: want live >= data and per = live/znodes",
			live, raw, per, nodes)
	}
}
