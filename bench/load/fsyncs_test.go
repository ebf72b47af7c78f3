package load

import (
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
