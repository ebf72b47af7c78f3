package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleCompare = `## corral bench compare

- started: 2026-11-26T08:09:29Z

| phase | metric | corral median | zookeeper median | corral/zookeeper (medians) |
|---|---|---:|---:|---:|
| create | ops/s | 88575 | 36958 | 2.40x |
| create | errors | 0 | 0 | — |
| get | ops/s | 439042 | 85532 | 5.13x |

### Latency distributions
`

func TestParseTables(t *testing.T) {
	tabs := parseTables(sampleCompare)
	if len(tabs) != 1 {
		t.Fatalf("%d tables, want 1", len(tabs))
	}
	tab := tabs[0]
	if tab.heading != "## corral bench compare" || len(tab.rows) != 3 || tab.header[4] != "corral/zookeeper (medians)" {
		t.Fatalf("table %+v", tab)
	}
	if got := ratioRows("compare", "r.md", tabs); len(got) != 1 || got[0].ratio != "2.40x / 5.13x" || got[0].measure != "create / get ops/s" {
		t.Fatalf("ratio rows %+v", got)
	}
	withOps := strings.NewReplacer(
		"| corral/zookeeper (medians) |", "| corral/zookeeper (medians) | corral+ops/corral (medians) |",
		"|---:|---:|---:|\n", "|---:|---:|---:|---:|\n",
		"| 2.40x |", "| 2.40x | 0.98x |", "| 5.13x |", "| 5.13x | 1.01x |", "| — |", "| — | — |").Replace(sampleCompare)
	// corral+ops ÷ corral stays out of the headline.
	got := ratioRows("compare", "r.md", parseTables(withOps))
	if len(got) != 1 || got[0].ratio != "2.40x / 5.13x" {
		t.Fatalf("ratio rows with corral+ops %+v", got)
	}
}

func TestReferenceTakesTheNewestRun(t *testing.T) {
	dir := t.TempDir()
	older := strings.ReplaceAll(sampleCompare, "2.40x", "1.11x")
	for name, body := range map[string]string{
		"compare-ops-repeat3-2026-11-25T0101.md": older,
		"compare-ops-repeat3-2026-11-26T0809.md": sampleCompare,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := writeReference(&b, dir, "runs"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| compare, standalone | create / get ops/s | 2.40x / 5.13x | [compare-ops-repeat3-2026-11-26T0809](runs/compare-ops-repeat3-2026-11-26T0809.md) |",
		"corral-bench compare --targets corral,corral+ops,zookeeper --repeat 3",
		"| create | ops/s | 88575 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reference lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1.11x") || strings.Contains(out, "| create | errors |") {
		t.Errorf("reference shows the older run or a filtered row:\n%s", out)
	}
}

func TestReferenceWithoutRunsIsAnError(t *testing.T) {
	var b strings.Builder
	if err := writeReference(&b, t.TempDir(), "runs"); err == nil {
		t.Fatal("no error for a directory without runs")
	}
}

// TestBenchmarksMDIsGenerated: BENCHMARKS.md is the generator's output
// for the stored runs, not edited by hand. Regenerate with
// go run ./cmd/corral-bench report-md --out BENCHMARKS.md
func TestBenchmarksMDIsGenerated(t *testing.T) {
	root := filepath.Join("..", "..")
	stored, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var b strings.Builder
	if err := writeReference(&b, "docs/bench/runs", "docs/bench/runs"); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(stored) {
		t.Fatal("BENCHMARKS.md is not the output of `go run ./cmd/corral-bench report-md --out BENCHMARKS.md`; regenerate it")
	}
}
