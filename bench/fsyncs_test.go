package bench

import (
	"strings"
	"testing"
)

func TestParseFsyncCount(t *testing.T) {
	// As ZooKeeper 3.9.3 prints its fsynctime summary (and corral does).
	zk := "zk_version\t3.9.3\nzk_avg_fsynctime\t0.5\nzk_min_fsynctime\t0\nzk_max_fsynctime\t12\nzk_cnt_fsynctime\t4217\nzk_sum_fsynctime\t2100\n"
	if n, err := parseFsyncCount(zk); err != nil || n != 4217 {
		t.Fatalf("parseFsyncCount = %d, %v; want 4217", n, err)
	}
	if _, err := parseFsyncCount("zk_version\t3.4.0\n"); err != errNoFsyncTime {
		t.Fatalf("missing key: err %v, want errNoFsyncTime", err)
	}
	if _, err := parseFsyncCount("zk_cnt_fsynctime\tmany\n"); err == nil {
		t.Fatal("a non-numeric count was accepted")
	}
}

func TestFsyncsPerMillion(t *testing.T) {
	addrs := []string{"a:1", "b:2", "c:3"}
	each := fsyncDeltas(addrs, []int64{10, 20, 30}, []int64{110, 70, 29})
	want := []int64{100, 50, 0} // a count that went down (a restart) is 0
	for i, f := range each {
		if f.Server != addrs[i] || f.Fsyncs != want[i] {
			t.Fatalf("deltas %+v, want %v", each, want)
		}
	}
	if d := fsyncDeltas(addrs, nil, []int64{1, 2, 3}); d != nil {
		t.Fatalf("deltas without a before count: %+v, want nil", d)
	}
	r := &PhaseResult{Ops: 300_000, FsyncsEach: each}
	if v, ok := fsyncsPerMillion(r); !ok || v != 500 {
		t.Fatalf("fsyncsPerMillion = %v, %v; want 500 (150 fsyncs over 300k ops)", v, ok)
	}
	if _, ok := fsyncsPerMillion(&PhaseResult{Ops: 10}); ok {
		t.Fatal("a figure without measured fsyncs")
	}
	var b strings.Builder
	WriteTable(&b, []PhaseResult{{Target: "corral", Phase: "create", Seconds: 1, Ops: 300_000, OpsPerSec: 300_000, FsyncsEach: each}})
	if !strings.Contains(b.String(), "fsyncs per 1M ops") || !strings.Contains(b.String(), "500") {
		t.Fatalf("table lacks the fsyncs row:\n%s", b.String())
	}
}
