package bench

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDurabilityPlotsFromReport(t *testing.T) {
	rep := cannedDurabilityReport()
	plots := durabilityPlots(rep)
	var files []string
	for _, p := range plots {
		files = append(files, p.File)
	}
	if want := []string{"create.png", "get.png", "queue.png", "cpu.png"}; !slices.Equal(files, want) {
		t.Fatalf("plots %v, want %v", files, want)
	}
	create := plots[0]
	if len(create.Series) != 5 || create.Series[2].Name != DurCorralDiskless {
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
	var onlyCreate []DurPhase
	for _, p := range rep.Phases {
		if p.Phase == DurPhaseCreate {
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
	rep := cannedDurabilityReport()
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
