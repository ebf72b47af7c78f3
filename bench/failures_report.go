package bench

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func (r *FailuresReport) markdown(w io.Writer)        { WriteFailuresMarkdown(w, r) }
func (r *FailuresReport) jsonLines(w io.Writer) error { return WriteFailuresJSONLines(w, r) }

// impactBefore is the interval before an event whose throughput is the
// event's baseline.
const impactBefore = 2 * time.Second

// EventImpact is what the clients saw around one event.
type EventImpact struct {
	// Before is the mean throughput of the whole buckets in the
	// impactBefore before the event (NaN when there are none).
	Before float64
	// Lowest is the lowest bucket's throughput from the event's bucket to
	// the next event (or the end); NoReplySeconds the total length of
	// those buckets without a single successful reply.
	Lowest         float64
	NoReplySeconds float64
}

// eventImpact measures the buckets around an event at at (seconds), up
// to next (the next event's time, or +Inf).
func eventImpact(bs []TimelineBucket, at, next float64) EventImpact {
	im := EventImpact{Before: math.NaN(), Lowest: math.NaN()}
	var sum, secs float64
	for _, b := range bs {
		end := b.T + b.Seconds
		if b.T >= at-impactBefore.Seconds()-1e-9 && end <= at+1e-9 {
			sum += float64(b.Reads + b.Writes)
			secs += b.Seconds
		}
		// The event's own bucket onwards, until the next event's bucket.
		if end > at+1e-9 && b.T < next-1e-9 {
			if math.IsNaN(im.Lowest) || b.OpsPerSec < im.Lowest {
				im.Lowest = b.OpsPerSec
			}
			if b.Reads+b.Writes == 0 {
				im.NoReplySeconds += b.Seconds
			}
		}
	}
	if secs > 0 {
		im.Before = sum / secs
	}
	return im
}

// impacts measures every event of a run.
func (r *FailuresRun) impacts() []EventImpact {
	out := make([]EventImpact, len(r.Events))
	for i, ev := range r.Events {
		next := math.Inf(1)
		for _, later := range r.Events[i+1:] {
			if later.At > ev.At {
				next = later.At
				break
			}
		}
		out[i] = eventImpact(r.Buckets, ev.At, next)
	}
	return out
}

func fmtRate(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.0f", v)
}

// WriteFailuresMarkdown writes the report: the conditions, the events with
// the throughput around each, a timeline with one row per second and a
// column group per target, and the totals.
func WriteFailuresMarkdown(w io.Writer, rep *FailuresReport) {
	e := rep.Env
	fmt.Fprintf(w, "## corral bench failures\n\n")
	fmt.Fprintf(w, "Throughput over time while servers are killed and restarted, after the ZooKeeper paper's §5.1, Fig. 8.\n\n")
	if rep.Command != "" {
		fmt.Fprintf(w, "- command: `%s`\n", rep.Command)
	}
	fmt.Fprintf(w, "- started: %s\n", rep.Start.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the servers and the load generator (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- load: %d connections × %d requests in flight, spread round-robin over the members (followers first, the leader last); "+
		"%d%% getData, %d%% setData of nodes picked uniformly at random from %d preloaded %d-byte nodes; %v warm-up, then %v measured "+
		"in %v buckets; session timeout %v\n",
		e.Conns, e.Inflight, rep.ReadPct, 100-rep.ReadPct, rep.Keys, e.ValueSize, e.Warmup, e.Duration, rep.Bucket, rep.SessionTimeout)
	fmt.Fprintf(w, "- clients: a client whose connection breaks (its server killed or closing it, or no reply for 2/3 of the session timeout) "+
		"counts the requests it had in flight as lost and opens a new session on the next server of its list, trying each in turn "+
		"(%v to %v between rounds); it moves only then, as the paper's clients did\n", reconnectPause, maxReconnectPause)
	fmt.Fprintf(w, "- schedule (from the start of the measured interval): `%s`; the member a kill-leader or kill-follower step hits is "+
		"the one srvr names, asked from %v before the step (a saturated server answers srvr slowly); kills are SIGKILL\n",
		FormatSchedule(rep.Schedule), probeLead)
	if e.WorkDir != "" {
		fmt.Fprintf(w, "- zoo.cfg (the same for every target, but for ports and dataDir): %d-server ensemble on 127.0.0.1, %s, forceSync=yes, "+
			"globalOutstandingLimit=%d, maxClientCnxns=0; members killed with SIGKILL and restarted from the same zoo.cfg and dataDir\n",
			rep.Servers, e.Timing.orDefault(), e.GlobalOutstandingLimit)
	}
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "- %s:", r.Target)
		if len(r.Argv) > 0 {
			fmt.Fprintf(w, " `%s`", strings.Join(r.Argv, " "))
		} else if len(r.Addrs) > 0 {
			fmt.Fprintf(w, " %s", strings.Join(r.Addrs, ","))
		}
		if r.JavaHeap != "" {
			fmt.Fprintf(w, " (JVM heap -Xmx%s)", r.JavaHeap)
		}
		if r.Version != "" {
			fmt.Fprintf(w, "; srvr: %s", r.Version)
		}
		if r.Leader != 0 {
			fmt.Fprintf(w, "; leader at the start server.%d", r.Leader)
		}
		if r.Err != "" {
			fmt.Fprintf(w, "; FAILED: %s", r.Err)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	writeFailureEvents(w, rep)
	writeFailureTimeline(w, rep)
	fmt.Fprintf(w, "### Totals over the measured interval\n\n")
	fmt.Fprintf(w, "| target | ops | mean ops/s | error replies | lost | reconnects | sessions opened | failed connection attempts |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.Runs {
		mean := 0.0
		if s := e.Duration.Seconds(); s > 0 {
			mean = float64(r.Ops) / s
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %d | %d | %d | %d | %d |\n", r.Target, r.Ops, mean, r.Errors, r.Lost, r.Reconnects, r.Sessions, r.ConnectFails)
	}
	fmt.Fprintf(w, "\nError replies are replies with an error code; lost requests were in flight on a connection that broke. "+
		"Sessions and failed attempts include the warm-up.\n")
	for _, p := range rep.Plots {
		fmt.Fprintf(w, "\n![%s](%s)\n", p, p)
	}
	for _, r := range rep.Runs {
		if r.LastClientErr != "" {
			fmt.Fprintf(w, "\n- %s: last client error: %s", r.Target, r.LastClientErr)
		}
	}
	if rep.Err != "" {
		fmt.Fprintf(w, "\n- FAILED: %s", rep.Err)
	}
	fmt.Fprintln(w)
}

func writeFailureEvents(w io.Writer, rep *FailuresReport) {
	has := false
	for _, r := range rep.Runs {
		has = has || len(r.Events) > 0
	}
	if !has {
		return
	}
	fmt.Fprintf(w, "### Events\n\n")
	fmt.Fprintf(w, "| target | step | planned s | at s | action | server | pid | ops/s in the %v before | lowest %v bucket until the next event | time without a reply s | error |\n",
		impactBefore, rep.Bucket)
	fmt.Fprintf(w, "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rep.Runs {
		im := r.impacts()
		for i, ev := range r.Events {
			server, pid := "—", "—"
			if ev.Server != 0 {
				server = fmt.Sprintf("server.%d", ev.Server)
			}
			if ev.PID != 0 {
				pid = fmt.Sprint(ev.PID)
			}
			fmt.Fprintf(w, "| %s | %d | %.1f | %.3f | %s | %s | %s | %s | %s | %.1f | %s |\n", r.Target, ev.Step, ev.Planned, ev.At,
				ev.Action, server, pid, fmtRate(im[i].Before), fmtRate(im[i].Lowest), im[i].NoReplySeconds, ev.Err)
		}
	}
	fmt.Fprintln(w)
}

// writeFailureTimeline writes one row per second: per target the
// throughput, error replies, lost requests and reconnects, and the events
// of that second.
func writeFailureTimeline(w io.Writer, rep *FailuresReport) {
	if len(rep.Runs) == 0 {
		return
	}
	fmt.Fprintf(w, "### Timeline (1 s rows; results.jsonl has the %v buckets)\n\n", rep.Bucket)
	head := []string{"t s"}
	align := []string{"---:"}
	rows := 0
	secs := make([][]TimelineBucket, len(rep.Runs))
	for i, r := range rep.Runs {
		secs[i] = coarsen(r.Buckets, time.Second)
		rows = max(rows, len(secs[i]))
		head = append(head, r.Target+" ops/s", "errors", "lost", "reconnects")
		align = append(align, "---:", "---:", "---:", "---:")
	}
	head = append(head, "events")
	align = append(align, "---")
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
	for k := range rows {
		cells := []string{fmt.Sprint(k)}
		var evs []string
		for i, r := range rep.Runs {
			if k >= len(secs[i]) {
				cells = append(cells, "—", "—", "—", "—")
				continue
			}
			b := secs[i][k]
			cells = append(cells, fmt.Sprintf("%.0f", b.OpsPerSec), fmt.Sprint(b.Errors), fmt.Sprint(b.Lost), fmt.Sprint(b.Reconnects))
			for _, ev := range r.Events {
				if ev.At >= b.T && ev.At < b.T+1 {
					evs = append(evs, fmt.Sprintf("%s: %s", r.Target, eventLabel(ev)))
				}
			}
		}
		cells = append(cells, strings.Join(evs, "; "))
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

// eventLabel is "3 kill-leader s5": step, action, server.
func eventLabel(ev FailureEvent) string {
	l := fmt.Sprintf("%d %s", ev.Step, ev.Action)
	if ev.Server != 0 && !strings.Contains(ev.Action, "=") {
		l += fmt.Sprintf(" s%d", ev.Server)
	}
	if ev.Err != "" {
		l += " (failed)"
	}
	return l
}

// failuresJSON is what every failures JSON line carries.
type failuresJSON struct {
	Kind     string `json:"kind"`
	Start    string `json:"start"`
	CPUs     int    `json:"cpus"`
	ReadPct  int    `json:"read_pct"`
	BucketMs int64  `json:"bucket_ms"`
}

// failuresWho says whose an event or bucket line is.
type failuresWho struct {
	Target  string `json:"target"`
	Servers int    `json:"servers"`
}

// WriteFailuresJSONLines writes per target a summary ("kind": "run"), a
// line per event ("kind": "event") and one per bucket ("kind": "bucket").
func WriteFailuresJSONLines(w io.Writer, rep *FailuresReport) error {
	enc := json.NewEncoder(w)
	for _, r := range rep.Runs {
		c := failuresJSON{Start: rep.Start.UTC().Format(time.RFC3339), CPUs: rep.Env.CPUs, ReadPct: rep.ReadPct,
			BucketMs: rep.Bucket.Milliseconds()}
		who := failuresWho{Target: r.Target, Servers: r.Servers}
		c.Kind = "run"
		if err := enc.Encode(struct {
			failuresJSON
			FailuresRun
			Schedule string `json:"schedule"`
		}{c, r, FormatSchedule(rep.Schedule)}); err != nil {
			return err
		}
		for _, ev := range r.Events {
			c.Kind = "event"
			if err := enc.Encode(struct {
				failuresJSON
				failuresWho
				FailureEvent
			}{c, who, ev}); err != nil {
				return err
			}
		}
		for _, b := range r.Buckets {
			c.Kind = "bucket"
			if err := enc.Encode(struct {
				failuresJSON
				failuresWho
				TimelineBucket
			}{c, who, b}); err != nil {
				return err
			}
		}
	}
	return nil
}

// FailuresPlotFile is the name of the timeline plot.
const FailuresPlotFile = "failures.png"

// Size of one target's panel of the timeline plot.
const (
	failuresPlotWidth   = 10 * vg.Inch
	failuresPanelHeight = 3.2 * vg.Inch
)

// renderFailuresPlot draws one panel per target, one above the other on a
// shared time axis: successful replies per second (and the writes among
// them, dashed) in each bucket, and a vertical line at each event labelled
// with its step, action and server. Each panel has its own throughput
// scale: the figure is about the shape of each target's dips and
// recoveries (the tables compare the levels), and a target several times
// faster would flatten the other's into the floor.
func renderFailuresPlot(w io.Writer, rep *FailuresReport) error {
	var runs []FailuresRun
	for _, r := range rep.Runs {
		if len(r.Buckets) > 0 {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("bench: %s: no timeline to plot", FailuresPlotFile)
	}
	end := rep.Env.Duration.Seconds()
	plots := make([][]*plot.Plot, len(runs))
	for i, r := range runs {
		top := 0.0
		for _, b := range r.Buckets {
			top = max(top, b.OpsPerSec)
		}
		if top <= 0 {
			top = 1
		}
		// Room above the lines for the legend and the event labels.
		top *= 1.35
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, %d servers: throughput upon failures (%d%% reads, %v buckets; ZooKeeper paper Fig. 8)",
			r.Target, r.Servers, rep.ReadPct, rep.Bucket)
		p.X.Label.Text = "time since the measured interval began (s)"
		p.Y.Label.Text = "operations/s"
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.Legend.Left = true
		// Below the title, inside the axes.
		p.Legend.YOffs = -vg.Points(12)
		// A step per bucket, held over the bucket's length: the rate is an
		// average over it, not a sample at a point.
		var all, writes plotter.XYs
		for _, b := range r.Buckets {
			all = append(all, plotter.XY{X: b.T, Y: b.OpsPerSec})
			writes = append(writes, plotter.XY{X: b.T, Y: float64(b.Writes) / b.Seconds})
		}
		last := r.Buckets[len(r.Buckets)-1]
		all = append(all, plotter.XY{X: last.T + last.Seconds, Y: all[len(all)-1].Y})
		writes = append(writes, plotter.XY{X: last.T + last.Seconds, Y: writes[len(writes)-1].Y})
		la, err := plotter.NewLine(all)
		if err != nil {
			return err
		}
		la.Color, la.Width, la.StepStyle = plotutil.Color(0), vg.Points(1.2), plotter.PostStep
		lw, err := plotter.NewLine(writes)
		if err != nil {
			return err
		}
		lw.Color, lw.Width, lw.StepStyle = plotutil.Color(1), vg.Points(1), plotter.PostStep
		lw.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(la, lw)
		p.Legend.Add("all replies", la)
		p.Legend.Add("writes", lw)
		if err := addEventMarkers(p, r.Events, top); err != nil {
			return err
		}
		p.X.Min, p.X.Max = 0, end
		p.Y.Min, p.Y.Max = 0, top
		p.Y.Tick.Marker = wholeTicks{}
		plots[i] = []*plot.Plot{p}
	}
	img := vgimg.NewWith(vgimg.UseWH(failuresPlotWidth, failuresPanelHeight*vg.Length(len(runs))),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(runs), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(10)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// wholeTicks are plot's default ticks labelled as whole numbers
// ("25000", not "25000.00").
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', 0, 64)
		}
	}
	return ticks
}

// addEventMarkers draws a grey vertical line at each event, with its label
// written upwards beside the line's top.
func addEventMarkers(p *plot.Plot, events []FailureEvent, top float64) error {
	if len(events) == 0 {
		return nil
	}
	var labels plotter.XYLabels
	for i, ev := range events {
		l, err := plotter.NewLine(plotter.XYs{{X: ev.At, Y: 0}, {X: ev.At, Y: top}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 110}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		// One label per step: a restart of several members is one event
		// on the axis ("7 restart s1 s3").
		if i > 0 && events[i-1].Step == ev.Step {
			labels.Labels[len(labels.Labels)-1] += fmt.Sprintf(" s%d", ev.Server)
			continue
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: ev.At, Y: top})
		labels.Labels = append(labels.Labels, eventLabel(ev))
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lab.TextStyle {
		s := &lab.TextStyle[i]
		s.Rotation = math.Pi / 2
		// Rotated a quarter turn, the label's end sits at the top of the
		// line and the text runs down its left side.
		s.XAlign, s.YAlign = text.XRight, text.YBottom
		s.Font.Size = vg.Points(8)
		s.Color = color.Gray{Y: 60}
	}
	p.Add(lab)
	return nil
}

// WriteFailuresPlot writes the plot into dir and records it in rep.Plots.
func WriteFailuresPlot(dir string, rep *FailuresReport) error {
	f, err := os.Create(filepath.Join(dir, FailuresPlotFile))
	if err != nil {
		return err
	}
	if err := renderFailuresPlot(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	rep.Plots = append(rep.Plots, FailuresPlotFile)
	return nil
}
