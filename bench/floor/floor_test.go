package floor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/bench/stats"
)

func TestQuorumAndRoundTrips(t *testing.T) {
	for _, c := range []struct{ n, quorum, trips int }{{1, 1, 1}, {2, 2, 3}, {3, 2, 3}, {5, 3, 3}} {
		if q := Quorum(c.n); q != c.quorum {
			t.Errorf("Quorum(%d) = %d, want %d", c.n, q, c.quorum)
		}
		if k := RoundTrips(c.n); k != c.trips {
			t.Errorf("RoundTrips(%d) = %d, want %d", c.n, k, c.trips)
		}
	}
}

func TestSyncRoundCommitIsTheQuorumth(t *testing.T) {
	r := syncRound{1 * time.Millisecond, 2 * time.Millisecond, 9 * time.Millisecond}
	if got := r.commit(3); got != 2*time.Millisecond {
		t.Errorf("commit of 3 = %v, want the second to return", got)
	}
	if got := (syncRound{4 * time.Millisecond}).commit(1); got != 4*time.Millisecond {
		t.Errorf("commit of 1 = %v", got)
	}
}

func TestNewResultAddsRoundTrips(t *testing.T) {
	sync := stats.Latency{P50: 140, P99: 900}
	loop := stats.Latency{P50: 20, P99: 50}
	idle := stats.Latency{Count: 10, P50: 40, P99: 100}
	r := newResult(3, 4096, sync, loop, idle)
	if r.P50 != 140+3*20 || r.P99 != 900+3*50 {
		t.Errorf("floor = %v/%v µs, want 200/1050", r.P50, r.P99)
	}
	if r.IdleP50 != 140+3*40 || r.IdleP99 != 900+3*100 {
		t.Errorf("idle floor = %v/%v µs, want 260/1200", r.IdleP50, r.IdleP99)
	}
	if m, ok := r.IdleMultiple(520); !ok || m != 2 {
		t.Errorf("IdleMultiple(520) = %v %v, want 2", m, ok)
	}
	if r.Quorum != 2 || r.RoundTrips != 3 {
		t.Errorf("quorum %d round trips %d", r.Quorum, r.RoundTrips)
	}
	if m, ok := r.Multiple(600); !ok || m != 3 {
		t.Errorf("Multiple(600) = %v %v, want 3", m, ok)
	}
	if _, ok := (Result{}).Multiple(600); ok {
		t.Error("Multiple of an unmeasured floor reported")
	}
	one := newResult(1, 4096, sync, loop, stats.Latency{})
	if one.P50 != 160 {
		t.Errorf("standalone floor p50 = %v, want 160", one.P50)
	}
	if _, ok := one.IdleMultiple(600); ok || one.IdleP50 != 0 {
		t.Errorf("an unmeasured idle floor reported: %+v", one)
	}
}

func TestSyncProbeWritesEachRecordAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	p := syncProbe{dir: dir, members: 3, rounds: 5, record: bytes.Repeat([]byte{1}, 512)}
	h, written, err := p.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h.Count() != 5 {
		t.Errorf("%d rounds recorded, want 5", h.Count())
	}
	if len(written) != 3 {
		t.Fatalf("written for %d members, want 3", len(written))
	}
	for i, n := range written {
		if n != 5 {
			t.Errorf("member %d wrote %d records, want 5", i, n)
		}
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("probe left %d files behind", len(left))
	}
}

func TestSyncProbeRefusesBadInput(t *testing.T) {
	for _, p := range []syncProbe{
		{dir: t.TempDir(), members: 0, rounds: 1, record: []byte{1}},
		{dir: t.TempDir(), members: 1, rounds: 0, record: []byte{1}},
		{dir: t.TempDir(), members: 1, rounds: 1},
	} {
		if _, _, err := p.run(context.Background()); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	if _, _, err := (syncProbe{dir: "/nonexistent/floor", members: 1, rounds: 1, record: []byte{1}}).run(context.Background()); err == nil {
		t.Error("a missing directory accepted")
	}
}

func TestPingPongCountsRoundTrips(t *testing.T) {
	for _, gap := range []time.Duration{0, 50 * time.Microsecond} {
		h, err := roundTrips(context.Background(), InProcessEcho, 50, 64, gap)
		if err != nil {
			t.Fatal(err)
		}
		if h.Count() != 50 {
			t.Errorf("gap %v: %d round trips recorded, want 50", gap, h.Count())
		}
	}
}

// echoChildEnv makes this test binary serve as ProcessEcho's far end.
const echoChildEnv = "CORRAL_FLOOR_TEST_ECHO"

func TestMain(m *testing.M) {
	if os.Getenv(echoChildEnv) == "1" {
		size, err := strconv.Atoi(os.Args[len(os.Args)-1])
		if err == nil {
			err = ServeEcho(os.Stdout, size)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestProcessEchoCrossesProcesses(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(echoChildEnv, "1")
	peer := ProcessEcho(self, "-test.run=^$")
	h, err := roundTrips(context.Background(), peer, 20, 32, 10*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if h.Count() != 20 {
		t.Errorf("%d round trips, want 20", h.Count())
	}
	// A peer that prints no address is an error that names it, not a hang.
	t.Setenv(echoChildEnv, "0")
	if _, _, err := ProcessEcho(self, "-test.run=^$")(context.Background(), 32); err == nil || !strings.Contains(err.Error(), "printed no address") {
		t.Errorf("a peer without an address: %v", err)
	}
	if _, _, err := ProcessEcho("/nonexistent/corral-bench", "floor-echo")(context.Background(), 32); err == nil {
		t.Error("a missing binary accepted")
	}
}

func TestServeEchoRefusesBadSizes(t *testing.T) {
	for _, n := range []int{0, -1, 1<<20 + 1} {
		if err := ServeEcho(io.Discard, n); err == nil {
			t.Errorf("size %d accepted", n)
		}
	}
}

func TestRunReportsEachSize(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Dir: dir, Members: []int{1, 3}, SyncRounds: 3, Pings: 10, IdlePings: 7, RecordSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	three, ok := rep.For(3)
	if !ok || three.Sync.Count != 3 || three.RecordSize != 256 {
		t.Errorf("For(3) = %+v %v", three, ok)
	}
	if _, ok := rep.For(5); ok {
		t.Error("For(5) found an unmeasured size")
	}
	if rep.Loopback.Count != 10 {
		t.Errorf("loopback count %d, want 10", rep.Loopback.Count)
	}
	if rep.Idle.Count != 7 || three.IdleP50 <= float64(three.Sync.P50) {
		t.Errorf("idle loopback %+v, idle floor %v", rep.Idle, three.IdleP50)
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	if !strings.Contains(md.String(), "| 3 | 2 | 256 |") {
		t.Errorf("markdown lacks the 3-member row:\n%s", md.String())
	}
	var jl bytes.Buffer
	if err := rep.JSONLines(&jl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(jl.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d JSON lines, want 2", len(lines))
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil {
		t.Fatal(err)
	}
	if got["floor"] != true || got["members"] != float64(3) || got["floor_p50_us"] == nil || got["idle_floor_p50_us"] == nil {
		t.Errorf("JSON line %s", lines[1])
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("Run left %d files behind", len(left))
	}
}

func TestConfigRefusesOutOfRange(t *testing.T) {
	for _, c := range []Config{{Members: []int{0}}, {Members: []int{65}}, {SyncRounds: -1}, {Pings: MaxRounds + 1}, {RecordSize: -4},
		{IdlePings: -1}, {IdleGap: -time.Second}, {IdleGap: MaxIdleGap + 1}} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestPreallocateFills(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := int64(3*preallocChunk + 100)
	if err := preallocate(f, size); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != size {
		t.Errorf("preallocated %d bytes, want %d", st.Size(), size)
	}
}

func TestSyncProbeRefusesAnOversizedLog(t *testing.T) {
	p := syncProbe{dir: t.TempDir(), members: 1, rounds: MaxLogBytes/512 + 1, record: make([]byte, 512)}
	if _, _, err := p.run(context.Background()); err == nil {
		t.Error("a log beyond MaxLogBytes accepted")
	}
}
