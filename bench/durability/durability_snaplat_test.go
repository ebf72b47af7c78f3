package durability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// zkMntrSnap is ZooKeeper 3.9.3's mntr around the snapshot keys, as a
// standalone server printed it after its start-up snapshot.
const zkMntrSnap = "zk_version\t3.9.3-c26634f34490bb0ea7a09cc51e05ede3b4e320ee, built on 2024-10-17 23:21 UTC\n" +
	"zk_server_state\tstandalone\n" +
	"zk_znode_count\t5\n" +
	"zk_snapshot_rate_limited_count\t0\n" +
	"zk_snap_count\t0\n" +
	"zk_avg_inflight_snap_count\t0.0\n" +
	"zk_cnt_inflight_snap_count\t0\n" +
	"zk_avg_snapshottime\t10.0\n" +
	"zk_min_snapshottime\t10\n" +
	"zk_max_snapshottime\t10\n" +
	"zk_cnt_snapshottime\t1\n" +
	"zk_sum_snapshottime\t10\n" +
	"zk_avg_startup_snap_load_time\t2.0\n" +
	"zk_cnt_startup_snap_load_time\t1\n"

func TestParseSnapTimes(t *testing.T) {
	got, err := parseSnapTimes(zkMntrSnap)
	if err != nil {
		t.Fatal(err)
	}
	// zk_cnt_inflight_snap_count and the startup keys are other summaries.
	if want := (snapTimes{Count: 1, Sum: 10, Min: 10, Max: 10, Avg: 10}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// corral's mntr: the same keys, among its own.
	corral := "zk_server_state\tfollower\nzk_fsync_count\t12\nzk_avg_snapshottime\t156.3333\nzk_min_snapshottime\t40\n" +
		"zk_max_snapshottime\t300\nzk_cnt_snapshottime\t3\nzk_sum_snapshottime\t469\n"
	if got, err := parseSnapTimes(corral); err != nil || got.Count != 3 || got.Sum != 469 || got.Avg != 156.3333 {
		t.Errorf("corral: %+v, %v", got, err)
	}
	for _, out := range []string{
		"",
		"This ZooKeeper instance is not currently serving requests\n",
		"zk_cnt_snapshottime\t1\n", // no sum
		"zk_avg_inflight_snap_count\t0.0\nzk_cnt_inflight_snap_count\t0\n",
	} {
		if _, err := parseSnapTimes(out); !errors.Is(err, errNoSnapTime) {
			t.Errorf("%q: err %v, want errNoSnapTime", out, err)
		}
	}
	for _, out := range []string{
		"zk_cnt_snapshottime\tmany\nzk_sum_snapshottime\t1\n",
		"zk_cnt_snapshottime\t-1\nzk_sum_snapshottime\t1\n",
		"zk_cnt_snapshottime\t1\nzk_sum_snapshottime\t1\nzk_avg_snapshottime\tNaN?\n",
	} {
		if _, err := parseSnapTimes(out); err == nil || errors.Is(err, errNoSnapTime) {
			t.Errorf("%q: err %v, want a bad-value error", out, err)
		}
	}
}

func TestSnapTimesSince(t *testing.T) {
	before := snapTimes{Count: 4, Sum: 1000}
	for _, c := range []struct {
		after snapTimes
		n     int64
		ms    float64
	}{
		{snapTimes{Count: 4, Sum: 1000}, 0, 0},
		{snapTimes{Count: 5, Sum: 1250}, 1, 250},
		{snapTimes{Count: 6, Sum: 1300}, 2, 150},
		{snapTimes{Count: 1, Sum: 80}, 0, 0}, // restarted: counters went back
	} {
		if n, ms := c.after.since(before); n != c.n || ms != c.ms {
			t.Errorf("%+v since %+v = %d, %v; want %d, %v", c.after, before, n, ms, c.n, c.ms)
		}
	}
}

func TestParseZnodeCount(t *testing.T) {
	if n, err := parseZnodeCount(zkMntrSnap); err != nil || n != 5 {
		t.Errorf("got %d, %v", n, err)
	}
	for _, out := range []string{"", "zk_znode_count\tlots\n", "This ZooKeeper instance is not currently serving requests\n"} {
		if _, err := parseZnodeCount(out); err == nil {
			t.Errorf("%q: no error", out)
		}
	}
}

func TestListSnapFiles(t *testing.T) {
	dir := t.TempDir()
	if f, err := listSnapFiles(dir); err != nil || len(f) != 0 {
		t.Fatalf("no version-2: %v, %v", f, err)
	}
	v2 := filepath.Join(dir, "version-2")
	if err := os.MkdirAll(v2, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"snapshot.0": 3, "snapshot.1a.tmp": 5, "snapshot.7.corrupt": 1, "log.1": 9, "checkpoint.2": 4} {
		if err := os.WriteFile(filepath.Join(v2, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := listSnapFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (snapFiles{"snapshot.0": 3, "snapshot.1a": 5}); !before.equal(want) {
		t.Fatalf("got %v, want %v", before, want)
	}
	// corral renames the .tmp when done: the same snapshot, not a new one.
	if err := os.Rename(filepath.Join(v2, "snapshot.1a.tmp"), filepath.Join(v2, "snapshot.1a")); err != nil {
		t.Fatal(err)
	}
	after, _ := listSnapFiles(dir)
	if after.newSince(before) || !after.equal(before) {
		t.Errorf("rename of the .tmp: %v vs %v", after, before)
	}
	if err := os.WriteFile(filepath.Join(v2, "snapshot.2b"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, _ = listSnapFiles(dir)
	if !after.newSince(before) || after.equal(before) {
		t.Errorf("a new snapshot not seen: %v vs %v", after, before)
	}
	// A growing file is a change, not a new snapshot.
	grown := snapFiles{"snapshot.0": 3, "snapshot.1a": 6}
	if grown.newSince(before) || grown.equal(before) {
		t.Errorf("growth: newSince %v, equal %v", grown.newSince(before), grown.equal(before))
	}
}

func TestNextFillChunk(t *testing.T) {
	for _, c := range []struct {
		n    int64
		d    time.Duration
		want int64
	}{
		{1000, 100 * time.Millisecond, 1000},
		{1000, 50 * time.Millisecond, 2000},
		{1000, time.Second, snapFillMinChunk},
		{5000, time.Millisecond, snapFillMaxChunk},
		{10, 0, snapFillMaxChunk},
	} {
		if got := nextFillChunk(c.n, c.d); got != c.want {
			t.Errorf("nextFillChunk(%d, %v) = %d, want %d", c.n, c.d, got, c.want)
		}
	}
}

func TestTreeSizes(t *testing.T) {
	got := treeSizes([]int64{500000, 100000}, []int64{250000, 100000, 1000000})
	if want := []int64{100000, 250000, 500000, 1000000}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := treeSizes(nil, nil); len(got) != 0 {
		t.Errorf("no sizes: %v", got)
	}
}

// simMember is a simulated server's snapshot behaviour: a snapshot starts
// when every writes have been applied since the last one began (its file
// appears at once), and is counted after polls more mntr readings, with
// the next of durations; it takes len(durations) snapshots in all.
type simMember struct {
	every, since int64
	durations    []int64
	polls        int
	left         int // readings until the running snapshot is counted; 0: none runs
	// stuck: the file appears but the counters never move.
	stuck bool
	files snapFiles
	times snapTimes
	n     int
}

func (m *simMember) start() {
	m.n++
	m.files[fmt.Sprintf("snapshot.%x", m.n)] = 1
	m.left = m.polls
}

type simProbe struct {
	ms      []*simMember
	filled  int64
	overlap int // fill calls made while a snapshot ran
}

func (p *simProbe) members() int { return len(p.ms) }

func (p *simProbe) files(i int) (snapFiles, error) {
	out := snapFiles{}
	for k, v := range p.ms[i].files {
		out[k] = v
	}
	return out, nil
}

func (p *simProbe) times(_ context.Context, i int) (snapTimes, error) {
	m := p.ms[i]
	if m.left > 0 && !m.stuck {
		m.left--
		if m.left == 0 {
			d := m.durations[m.times.Count]
			m.times.Count++
			m.times.Sum += d
		}
	}
	return m.times, nil
}

func (p *simProbe) fill(_ context.Context, n int64) (int64, error) {
	for _, m := range p.ms {
		if m.left > 0 && !m.stuck {
			p.overlap++
		}
	}
	p.filled += n
	for _, m := range p.ms {
		m.since += n
		if m.every > 0 && m.since >= m.every && m.left == 0 && m.n < len(m.durations) {
			m.since = 0
			m.start()
		}
	}
	return n, nil
}

func testSnapLimits() snapLimits {
	return snapLimits{quiet: 20 * time.Millisecond, poll: time.Millisecond, settleTimeout: 10 * time.Second,
		waitTimeout: 200 * time.Millisecond, fillTimeout: 10 * time.Second, maxFill: 20000}
}

// TestMeasureSnapshotsSimulated: the baseline is taken after a snapshot
// already running has been counted, each member's time is its own next
// snapshot's, writing pauses while a snapshot runs, and a member that
// never snapshots is reported without failing the others.
func TestMeasureSnapshotsSimulated(t *testing.T) {
	// Member 1 is writing a 999 ms snapshot when the measurement begins;
	// its next takes 40 ms.
	m1 := &simMember{every: 1000, durations: []int64{999, 40}, polls: 3, files: snapFiles{"snapshot.0": 1}}
	m1.start()
	p := &simProbe{ms: []*simMember{
		m1,
		{every: 7000, durations: []int64{70}, polls: 5, files: snapFiles{}},
		{every: 0, durations: []int64{1}, polls: 1, files: snapFiles{}}, // never
	}}
	res := DurSnapshot{Members: []DurSnapMember{{ID: 1}, {ID: 2}, {ID: 3}}}
	measureSnapshots(context.Background(), p, testSnapLimits(), &res, slog.New(slog.DiscardHandler))

	if res.Err != "" {
		t.Fatalf("measurement failed: %s", res.Err)
	}
	if m := res.Members[0]; m.Snapshots != 1 || m.Ms != 40 || m.Err != "" {
		t.Errorf("member 1: %+v, want one 40 ms snapshot (the one running before is not measured)", m)
	}
	if m := res.Members[1]; m.Snapshots != 1 || m.Ms != 70 || m.Err != "" {
		t.Errorf("member 2: %+v, want one 70 ms snapshot", m)
	}
	if m := res.Members[2]; m.Snapshots != 0 || !strings.Contains(m.Err, "no snapshot") {
		t.Errorf("member 3: %+v, want no snapshot and an error", m)
	}
	if res.Ms != 55 || res.MinMs != 40 || res.MaxMs != 70 {
		t.Errorf("summary %v (%v–%v), want 55 (40–70)", res.Ms, res.MinMs, res.MaxMs)
	}
	if p.overlap != 0 {
		t.Errorf("%d chunks written while a snapshot ran", p.overlap)
	}
	// Member 3 never snapshots: the writes stop at the bound.
	if res.FillWrites != testSnapLimits().maxFill || p.filled != res.FillWrites {
		t.Errorf("fill writes %d (probe saw %d), want the bound %d", res.FillWrites, p.filled, testSnapLimits().maxFill)
	}
}

// TestMeasureSnapshotsStuck: a new snapshot file whose snapshot mntr never
// counts is reported for that member after the wait, and no member
// snapshotting at all fails the point.
func TestMeasureSnapshotsStuck(t *testing.T) {
	p := &simProbe{ms: []*simMember{{every: 500, durations: []int64{10}, polls: 1, stuck: true, files: snapFiles{}}}}
	res := DurSnapshot{Members: []DurSnapMember{{ID: 1}}}
	measureSnapshots(context.Background(), p, testSnapLimits(), &res, slog.New(slog.DiscardHandler))
	if m := res.Members[0]; m.Snapshots != 0 || !strings.Contains(m.Err, "counted no snapshot") {
		t.Errorf("member: %+v", m)
	}
	if res.Err == "" || res.Ms != 0 {
		t.Errorf("point: %+v, want an error and no value", res)
	}
	if res.FillWrites >= testSnapLimits().maxFill {
		t.Errorf("kept writing (%d) after the member was given up", res.FillWrites)
	}
}

// The quiet wait stretches to cover corral's snapshot spacing: spacing
// times the longest snapshot any member reported.
func TestSnapQuietCoversSpacing(t *testing.T) {
	st := []memberSnapState{{times: snapTimes{Max: 200}}, {times: snapTimes{Max: 1500}}}
	lim := snapLimits{quiet: time.Second, spacing: 4.5}
	if got, want := lim.quietAfter(st), 6750*time.Millisecond; got != want {
		t.Fatalf("quietAfter = %v, want %v", got, want)
	}
	if got := lim.quietAfter(st[:1]); got != time.Second {
		t.Fatalf("a short snapshot: quietAfter = %v, want the 1s floor", got)
	}
	if got := (snapLimits{quiet: time.Second}).quietAfter(st); got != time.Second {
		t.Fatalf("no spacing: quietAfter = %v, want 1s", got)
	}
}
