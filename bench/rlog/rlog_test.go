package rlog

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-db/corral/config"
)

func TestArithmetic(t *testing.T) {
	if got := Ceiling(150, 3); got != 50 {
		t.Errorf("Ceiling(150, 3) = %v, want 50", got)
	}
	if got := Ceiling(150, 0); got != 0 {
		t.Errorf("Ceiling(150, 0) = %v, want 0", got)
	}
	if got := Fraction(40, 50); got != 0.8 {
		t.Errorf("Fraction(40, 50) = %v, want 0.8", got)
	}
	if got := Fraction(40, 0); got != 0 {
		t.Errorf("Fraction without a ceiling = %v, want 0", got)
	}
	if got := MBps(3_000_000, 2*time.Second); got != 1.5 {
		t.Errorf("MBps = %v, want 1.5", got)
	}
	if got := MBps(1, 0); got != 0 {
		t.Errorf("MBps over no time = %v, want 0", got)
	}
	if got := Gain(106, 88); got < 0.204 || got > 0.205 {
		t.Errorf("Gain(106, 88) = %v, want the thesis's +20.45%%", got)
	}
	if got := Gain(1, 0); got != 0 {
		t.Errorf("Gain over 0 = %v, want 0", got)
	}
	if got := RSSSpread([]int64{100, 110, 105}); got != 0.1 {
		t.Errorf("RSSSpread = %v, want 0.1", got)
	}
	if got := RSSSpread([]int64{100}); got != 0 {
		t.Errorf("RSSSpread of one sample = %v, want 0", got)
	}
}

func TestPointCeiling(t *testing.T) {
	a := &Anchors{DiskMBps: 300, LoopbackMBps: 3000}
	for _, c := range []struct {
		p    Point
		want float64
	}{
		{Point{Figure: "5.1", Members: 3, Durability: "sync"}, 100},
		{Point{Figure: "5.4", Members: 5, Durability: "sync"}, 60},
		{Point{Figure: "5.2", Members: 3, Durability: "diskless"}, 1000},
		{Point{Figure: "read", Members: 3, Durability: "sync"}, 3000},
		{Point{Figure: "zookeeper", Members: 3, Durability: "forceSync=yes"}, 100},
	} {
		if got := PointCeiling(a, c.p); got != c.want {
			t.Errorf("PointCeiling(%+v) = %v, want %v", c.p, got, c.want)
		}
	}
	a.BySize = []DiskAnchor{{Block: 1024, MBps: 30}}
	if got := PointCeiling(a, Point{Figure: "5.1", Members: 3, Durability: "sync", Size: 1024}); got != 10 {
		t.Errorf("1 KiB point: ceiling %v, want its own disk anchor ÷ 3 = 10", got)
	}
	if got := PointCeiling(a, Point{Figure: "5.1", Members: 3, Durability: "sync", Size: 2048}); got != 100 {
		t.Errorf("a size without its anchor: ceiling %v, want the main anchor's 100", got)
	}
	if got := anchorSizes(&Config{Sizes: []int{4096, 1024, 65536}, Size: 65536}); len(got) != 3 || got[0] != 1024 || got[2] != 65536 {
		t.Errorf("anchorSizes = %v", got)
	}
	if got := PointCeiling(nil, Point{Members: 3}); got != 0 {
		t.Errorf("no anchors: ceiling %v, want 0", got)
	}
}

// TestTargets: the target figures come from the right points.
func TestTargets(t *testing.T) {
	r := &Report{Config: Summary{Members: 3, Durability: "sync", Size: 64 << 10}, Anchors: &Anchors{DiskMBps: 300}}
	r.add(Point{Figure: "5.4", Members: 3, Durability: "sync", GroupCommit: Decoupled, MBps: 90})
	r.add(Point{Figure: "5.4", Members: 5, Durability: "sync", GroupCommit: Decoupled, MBps: 10})
	r.add(Point{Figure: "5.4", Members: 3, Durability: "sync", GroupCommit: Coupled, MBps: 75})
	r.add(Point{Figure: "zookeeper", Members: 3, MBps: 15})
	r.Growth = &Growth{Samples: []RSSSample{{}, {}}, Spread: []float64{0.02, 0.07, 0.05}}
	got := r.Targets()
	if !got.OfCeilingOK || got.OfCeiling != 0.9 {
		t.Errorf("of ceiling %v (%v), want 0.9", got.OfCeiling, got.OfCeilingOK)
	}
	if !got.DecoupledGainOK || got.DecoupledGain < 0.199 || got.DecoupledGain > 0.201 {
		t.Errorf("decoupled gain %v (%v), want 0.2", got.DecoupledGain, got.DecoupledGainOK)
	}
	if !got.OverZooKeeperOK || got.OverZooKeeper != 6 {
		t.Errorf("over ZooKeeper %v (%v), want 6", got.OverZooKeeper, got.OverZooKeeperOK)
	}
	if !got.MaxRSSSpreadOK || got.MaxRSSSpread != 0.07 {
		t.Errorf("RSS spread %v (%v), want 0.07", got.MaxRSSSpread, got.MaxRSSSpreadOK)
	}
	if none := (&Report{Config: r.Config}).Targets(); none.OfCeilingOK || none.DecoupledGainOK || none.OverZooKeeperOK || none.MaxRSSSpreadOK {
		t.Errorf("an empty report claims targets: %+v", none)
	}
	var b strings.Builder
	r.Markdown(&b)
	for _, want := range []string{"| ≥ 80% | 90% |", "| ≥ +20% | +20% |", "| ≥ 5x | 6.0x |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := r.JSONLines(&b); err != nil || strings.Count(b.String(), "\n") != 7 {
		t.Errorf("JSON lines: %v\n%s", err, b.String())
	}
}

func TestParseVmRSS(t *testing.T) {
	n, err := parseVmRSS("Name:\tcorral\nVmPeak:\t  9 kB\nVmRSS:\t  2048 kB\n")
	if err != nil || n != 2048<<10 {
		t.Errorf("parseVmRSS = %d, %v; want 2 MiB", n, err)
	}
	for _, bad := range []string{"Name: x\n", "VmRSS: 12 MB\n", "VmRSS: x kB\n", "VmRSS:\n"} {
		if _, err := parseVmRSS(bad); err == nil {
			t.Errorf("parseVmRSS(%q): no error", bad)
		}
	}
	if n, err := ResidentBytes(os.Getpid()); err != nil || n <= 0 {
		t.Errorf("ResidentBytes(self) = %d, %v", n, err)
	}
}

func TestFill(t *testing.T) {
	d := DefaultConfig()
	if err := d.Fill(); err != nil {
		t.Fatalf("the default config: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"no sizes":             func(c *Config) { c.Sizes = nil },
		"size 0":               func(c *Config) { c.Sizes = []int{0} },
		"size too large":       func(c *Config) { c.Size = MaxSize + 1 },
		"no latency list":      func(c *Config) { c.Latency = nil },
		"outstanding 0":        func(c *Config) { c.Latency = []int{1, 0} },
		"quorum 0":             func(c *Config) { c.Quorums = []int{0} },
		"members too many":     func(c *Config) { c.Members = MaxMembers + 1 },
		"durability diskless":  func(c *Config) { c.Durability = "diskless" },
		"memory durability":    func(c *Config) { c.MemoryDurability = "sync" },
		"memory as disk":       func(c *Config) { c.Durability, c.MemoryDurability = "async", "async" },
		"duration 0":           func(c *Config) { c.Duration = 0 },
		"negative warmup":      func(c *Config) { c.Warmup = -time.Second },
		"negative phase bytes": func(c *Config) { c.PhaseBytes = -1 },
		"negative grow bytes":  func(c *Config) { c.GrowBytes = -1 },
		"one grow sample":      func(c *Config) { c.GrowSamples = 1 },
		"snap count 1":         func(c *Config) { c.SnapCount = 1 },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Fill(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSetups: the main ensemble first, then coupled, memory and the
// other quorum sizes, each once.
func TestSetups(t *testing.T) {
	c := DefaultConfig()
	var got []string
	for _, s := range setups(&c) {
		got = append(got, s.Name+"/"+s.GroupCommit)
	}
	want := "n3-sync/decoupled n3-sync-coupled/coupled n3-diskless/decoupled n1-sync/decoupled n2-sync/decoupled n5-sync/decoupled"
	if strings.Join(got, " ") != want {
		t.Errorf("setups %v, want %s", got, want)
	}
}

// TestZooCfg: a member's zoo.cfg is one corral reads, with the logs,
// the API and the group commit asked for.
func TestZooCfg(t *testing.T) {
	dir := t.TempDir()
	s := setup{Name: "x", Members: 3, Durability: "sync", GroupCommit: Coupled}
	text := zooCfg(2, dir, s, 2000, []int{2181, 2182, 2183}, []int{2888, 2889, 2890}, []int{3888, 3889, 3890}, []int{4001, 4002, 4003})
	path := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "myid"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, warnings, err := config.Load(path, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	// A key the server does not know is only a warning, and then the
	// setting silently does not apply (the purge's key once was wrong).
	if len(warnings) > 0 {
		t.Errorf("warnings %q from\n%s", warnings, text)
	}
	if c.RlogRoot != Root || c.RlogGroupCommit != config.RlogGroupCommitCoupled || c.APIPort != 4002 || c.ClientPort != 2182 || len(c.Servers) != 3 || c.SnapCount != 2000 ||
		c.PurgeTimeMs != purgeTimeMs || c.NumberToRetain != 3 || c.SnapSizeLimitKB != snapSizeLimitKB {
		t.Errorf("parsed %+v from\n%s", c, text)
	}
}

// TestPhase: the closed loop counts what completed in the measured
// interval, ends early at the byte bound, counts errors, and stops
// every writer.
func TestPhase(t *testing.T) {
	var running atomic.Int64
	p := phase(context.Background(), 4, 0, time.Minute, 1000, time.Second, func(ctx context.Context, _ int) (int, error) {
		running.Add(1)
		defer running.Add(-1)
		return 10, nil
	})
	if p.Bytes < 1000 || p.Ops != p.Bytes/10 || p.Errors != 0 || p.Outstanding != 4 {
		t.Errorf("byte-bounded phase: %+v", p)
	}
	if p.Seconds >= 60 {
		t.Errorf("the byte bound did not end the phase: %v s", p.Seconds)
	}
	if n := running.Load(); n != 0 {
		t.Errorf("%d writers still running", n)
	}
	boom := errors.New("boom")
	p = phase(context.Background(), 2, 0, 50*time.Millisecond, 0, time.Second, func(ctx context.Context, _ int) (int, error) {
		return 0, boom
	})
	if p.Ops != 0 || p.Errors == 0 || p.FirstError != "boom" {
		t.Errorf("failing phase: %+v", p)
	}
}

func TestAnchors(t *testing.T) {
	ctx := context.Background()
	mbps, blocks, err := diskBandwidth(ctx, t.TempDir(), 4096, 50*time.Millisecond, 1<<20)
	if err != nil || blocks < 1 || blocks > 256 || mbps <= 0 {
		t.Errorf("disk anchor: %v MB/s, %d blocks, %v", mbps, blocks, err)
	}
	if _, _, err := diskBandwidth(ctx, t.TempDir(), 0, time.Millisecond, 1<<20); err == nil {
		t.Error("disk anchor with a zero block: no error")
	}
	if mbps, err := LoopbackBandwidth(ctx, 64<<10, 50*time.Millisecond); err != nil || mbps <= 0 {
		t.Errorf("loopback anchor: %v MB/s, %v", mbps, err)
	}
}

var flagProcs = flag.Bool("rlog.procs", false, "run TestSmoke (corral and ZooKeeper ensembles of real processes; builds corral unless $CORRAL_BIN names it)")

// TestSmoke runs the whole experiment tiny: every setup launched, every
// phase run, the report complete. It checks what was measured, never how
// fast.
func TestSmoke(t *testing.T) {
	if !*flagProcs {
		t.Skip("starts real processes; run with -rlog.procs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Sizes, cfg.Latency, cfg.Quorums = []int{1024, 64 << 10}, []int{1, 2}, []int{1, 3}
	cfg.Warmup, cfg.Duration, cfg.AnchorDuration = 100*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond
	cfg.GrowBytes, cfg.GrowSamples, cfg.Outstanding = 4<<20, 4, 4
	cfg.CorralBin, cfg.WorkDir = os.Getenv("CORRAL_BIN"), t.TempDir()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range rep.Points {
		count[p.Figure]++
		if p.Ops == 0 || p.Errors != 0 {
			t.Errorf("%s %s size %d: %d ops, %d errors (%s)", p.Figure, p.Setup, p.Size, p.Ops, p.Errors, p.FirstError)
		}
	}
	// 5.1: 2 sizes; 5.2: 2 counts × disk and memory; 5.4: n3, coupled, n1.
	for fig, want := range map[string]int{"5.1": 2, "5.2": 4, "5.4": 3, "read": 1, "zookeeper": 1} {
		if count[fig] != want {
			t.Errorf("figure %s: %d points, want %d", fig, count[fig], want)
		}
	}
	if rep.Anchors == nil || rep.Anchors.CeilingMBps <= 0 || len(rep.Anchors.BySize) != 2 {
		t.Errorf("anchors %+v", rep.Anchors)
	}
	if g := rep.Growth; g == nil || len(g.Samples) < cfg.GrowSamples || len(g.Spread) != 3 {
		t.Errorf("growth %+v", rep.Growth)
	}
	tg := rep.Targets()
	if !tg.OfCeilingOK || !tg.DecoupledGainOK || !tg.OverZooKeeperOK || !tg.MaxRSSSpreadOK {
		t.Errorf("targets not all measured: %+v", tg)
	}
}

func TestCheckGrowSpace(t *testing.T) {
	dir := t.TempDir()
	free, err := freeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkGrowSpace(dir, 3, 1<<20); free > growSpace(3, 1<<20) && err != nil {
		t.Errorf("3 × 1 MiB with %d bytes free: %v", free, err)
	}
	err = checkGrowSpace(dir, 3, free)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "-grow-bytes") {
		t.Errorf("3 × the free space: %v, want an error naming %s and -grow-bytes", err, dir)
	}
	if _, err := freeBytes(filepath.Join(dir, "missing")); err == nil {
		t.Error("statfs of a missing directory succeeded")
	}
}
