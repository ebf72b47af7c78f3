package failures

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
)

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteFailuresMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteFailuresJSONLines(w, r) }

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
func WriteFailuresMarkdown(w io.Writer, rep *Report) {
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
		"(%v to %v between rounds); it moves only then, as the paper's clients did\n", bench.ReconnectPause, maxReconnectPause)
	fmt.Fprintf(w, "- schedule (from the start of the measured interval): `%s`; the member a kill-leader or kill-follower step hits is "+
		"the one srvr names, asked from %v before the step (a saturated server answers srvr slowly); kills are SIGKILL\n",
		FormatSchedule(rep.Schedule), probeLead)
	if e.WorkDir != "" {
		fmt.Fprintf(w, "- zoo.cfg (the same for every target, but for ports and dataDir): %d-server ensemble on 127.0.0.1, %s, forceSync=yes, "+
			"globalOutstandingLimit=%d, maxClientCnxns=0; members killed with SIGKILL and restarted from the same zoo.cfg and dataDir\n",
			rep.Servers, e.Timing.OrDefault(), e.GlobalOutstandingLimit)
	}
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "- %s:", r.Target)
		if len(r.Argv) > 0 {
			fmt.Fprintf(w, " `%s`", bench.ShownArgv(r.Argv))
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

func writeFailureEvents(w io.Writer, rep *Report) {
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
func writeFailureTimeline(w io.Writer, rep *Report) {
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
					evs = append(evs, fmt.Sprintf("%s: %s", r.Target, EventLabel(ev)))
				}
			}
		}
		cells = append(cells, strings.Join(evs, "; "))
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

// EventLabel is "3 kill-leader s5": step, action, server.
func EventLabel(ev FailureEvent) string {
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
func WriteFailuresJSONLines(w io.Writer, rep *Report) error {
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
