package plot

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/durability"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
)

func TestDurabilityPlotsFromReport(t *testing.T) {
	rep := plotCannedDurabilityReport()
	plots := durabilityPlots(rep)
	var files []string
	for _, p := range plots {
		files = append(files, p.File)
	}
	if want := []string{"create.png", "get.png", "queue.png", "cpu.png"}; !slices.Equal(files, want) {
		t.Fatalf("plots %v, want %v", files, want)
	}
	create := plots[0]
	if len(create.Series) != 5 || create.Series[2].Name != durability.DurCorralDiskless {
		t.Fatalf("create plot series: %+v", create.Series)
	}
	if !slices.Equal(create.Series[2].Values, []float64{2900, 3000, 3100}) {
		t.Errorf("diskless create values %v", create.Series[2].Values)
	}
	// A partial last second is not drawn.
	rep.Phases[2].Seconds = 2.5
	if v := durabilityPlots(rep)[0].Series[0].Values; len(v) != 2 {
		t.Errorf("2.5 s measured: %d points drawn", len(v))
	}
	// Phases that did not run draw no figure.
	var onlyCreate []durability.DurPhase
	for _, p := range rep.Phases {
		if p.Phase == durability.DurPhaseCreate {
			onlyCreate = append(onlyCreate, p)
		}
	}
	rep.Phases = onlyCreate
	if got := durabilityPlots(rep); len(got) != 1 || got[0].File != "create.png" {
		t.Errorf("with only the create phase: %+v", got)
	}
}

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

// distinctColors counts the colours of an image, up to limit.
func distinctColors(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

func TestLinePlotRender(t *testing.T) {
	lp := linePlot{File: "x.png", Title: "t", YLabel: "ops/s", Series: []namedSeries{
		{Name: "a", Values: []float64{1, 2, 3}}, {Name: "b", Values: []float64{3, 2, 1}},
	}}
	var b bytes.Buffer
	if err := lp.render(&b); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b.Bytes())
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w < 400 || h < 200 {
		t.Errorf("image %dx%d", w, h)
	}
	// Text, grid and two coloured lines: far more than a blank canvas.
	if n := distinctColors(img, 10); n < 10 {
		t.Errorf("only %d colours: nothing drawn?", n)
	}
	// Nothing to draw is an error, not an empty picture.
	empty := linePlot{File: "e.png", Series: []namedSeries{{Name: "a"}}}
	if err := empty.render(&bytes.Buffer{}); err == nil {
		t.Error("a plot without values rendered")
	}
}

func TestWriteDurabilityPlots(t *testing.T) {
	dir := t.TempDir()
	rep := plotCannedDurabilityReport()
	if err := WriteDurabilityPlots(dir, rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Plots) != 4 {
		t.Fatalf("recorded plots %v", rep.Plots)
	}
	for _, name := range rep.Plots {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		decodePNG(t, b)
	}
}

// plotCannedDurabilityReport is a run of every configuration with made-up
// numbers: create throughput is 1000 × (configuration index + 1) per
// second, so diskless (index 2) is 3000/s, corral-sync 1000/s and
// zk-forcesync 4000/s.
func plotCannedDurabilityReport() *durability.Report {
	cfg := durability.DefaultConfig()
	cfg.CreateDuration, cfg.GetDuration, cfg.CPUDuration, cfg.QueueDuration = 3*time.Second, 2*time.Second, 2*time.Second, 2*time.Second
	rep := &durability.Report{
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), End: time.Date(2026, 1, 2, 3, 9, 5, 0, time.UTC),
		CommandLine: "corral bench durability --create-duration 3s", Config: cfg,
		Env:        bench.Env{GOOS: "linux", GOARCH: "amd64", CPUs: 2, GOMAXPROCS: 2, LoadAvg: "0.50 0.40 0.30", WorkDir: "/tmp/w"},
		LoadAvgEnd: "1.50 1.00 0.80",
	}
	for i, tg := range durability.DurabilityTargets() {
		rate := int64(1000 * (i + 1))
		rep.Servers = append(rep.Servers, durability.DurabilityServer{Target: tg, ZooCfg: tg.Durability.Lines(), Info: bench.ServerInfo{
			Target: tg.Name, Argv: []string{"srv", tg.Name}, Leader: "server.3 (127.0.0.1:3)",
			Members: []bench.MemberInfo{{ID: 1, PID: 101 + 10*i}, {ID: 2, PID: 102 + 10*i}, {ID: 3, PID: 103 + 10*i}},
		}})
		lat := stats.Latency{Count: 10, P50: 1500, P99: 9000, Max: 12000}
		base := durability.DurPhase{Config: tg.Name, Server: tg.Server, Clients: 60, Seconds: 3, Latency: lat,
			CPUUse: load.CPUUse{ServerCPU: plotF64(1.5), LoadgenCPU: 0.3, MachineCPU: plotF64(2.1)}, LoadAvg: "0.5 0.4 0.3"}
		create := base
		create.Phase, create.PerSecond = durability.DurPhaseCreate, []int64{rate - 100, rate, rate + 100}
		create.Ops, create.OpsPerSec = 3*rate, float64(rate)
		create.Series = durability.SummarizeSeries(create.PerSecond, 3*time.Second)
		get := base
		get.Phase, get.Seconds, get.PerSecond, get.Ops, get.OpsPerSec = durability.DurPhaseGet, 2, []int64{50000, 52000}, 102000, 51000
		cpu := base
		cpu.Phase, cpu.Seconds, cpu.TargetRate, cpu.Ops, cpu.OpsPerSec = durability.DurPhaseCPU, 2, 1000, 2000, 1000
		cpu.ServerCPUPerSecond = []float64{70 + float64(i), 72}
		cpu.ServerCPUEach = []load.ProcCPU{{Server: "server.1 follower", CPU: 0.4}, {Server: "server.2 follower", CPU: 0.4}, {Server: "server.3 leader", CPU: 0.7}}
		queue := base
		queue.Phase, queue.Seconds, queue.PerSecond, queue.Ops, queue.OpsPerSec = durability.DurPhaseQueue, 2, []int64{400, 420}, 820, 410
		queue.Producers, queue.Consumers, queue.Produced, queue.ProducedPerSec = 1, 1, 900, 450
		queue.EndToEnd = &stats.Latency{Count: 820, P50: 200000, P99: 250000, Max: 260000}
		queue.LeftInQueue = 80
		rep.Phases = append(rep.Phases, cpu, queue, create, get)
	}
	return rep
}

func plotF64(v float64) *float64 { return &v }
