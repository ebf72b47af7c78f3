package failover

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/launch"
)

// WriteFailoverMarkdown writes the failover report: the conditions, the
// gap percentiles and a row per trial.
func WriteFailoverMarkdown(w io.Writer, rep *Report) {
	e := rep.Env
	fmt.Fprintf(w, "## corral bench failover\n\n")
	fmt.Fprintf(w, "- started: %s\n", rep.Start.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "- machine: %s/%s, %d CPUs shared by the servers and the client (GOMAXPROCS %d, %s)",
		e.GOOS, e.GOARCH, e.CPUs, e.GOMAXPROCS, e.GoVersion)
	if e.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", e.LoadAvg)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- target: %s, %d-server ensemble on 127.0.0.1", rep.Target, rep.Servers)
	if len(rep.Argv) > 0 {
		fmt.Fprintf(w, " `%s`", bench.ShownArgv(rep.Argv))
	}
	if rep.JavaHeap != "" {
		fmt.Fprintf(w, " (JVM heap -Xmx%s)", rep.JavaHeap)
	}
	if rep.Version != "" {
		fmt.Fprintf(w, "; srvr: %s", rep.Version)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- zoo.cfg: %s, forceSync=yes, one dataDir with myid per server, server.N=127.0.0.1:quorum:election;127.0.0.1:client\n",
		rep.Timing.OrDefault())
	neg := "not granted"
	if rep.Negotiated > 0 {
		neg = rep.Negotiated.String()
	}
	fmt.Fprintf(w, "- writer: one session, setData of %d bytes on %s in a closed loop (one request outstanding), starting on a follower; "+
		"session timeout asked %v, granted %s; a request unanswered for 2/3 of the session timeout counts as a lost connection "+
		"(the Java client's read timeout); after a lost connection it tries the servers in turn from the next one, "+
		"pausing %v after a round without success, and resumes its session (id, password, lastZxidSeen), creating a new one only if that expired\n",
		rep.ValueSize, FailoverPath, rep.SessionTimeout, neg, writerPause)
	fmt.Fprintf(w, "- each trial: at least %v and %d successful writes, SIGKILL of the leader by PID, wait (at most %v) for the first "+
		"successful write issued after the kill, restart of the killed server, wait (at most %v) until every server answers srvr "+
		"as leader or follower with exactly one leader and accepts a session\n",
		rep.Pre, minWritesBeforeKill, rep.RecoveryTimeout, rep.WholeTimeout)
	fmt.Fprintf(w, "- gap: from the completion of the last successful write before the kill to the completion of the first "+
		"successful write issued after it, on the client's clock (the harness runs in the client's process)\n\n")

	s := rep.Summary()
	fmt.Fprintf(w, "| trials | p50 gap ms | p90 gap ms | max gap ms | min gap ms |\n|---:|---:|---:|---:|---:|\n")
	if s.Trials > 0 {
		fmt.Fprintf(w, "| %d | %.1f | %.1f | %.1f | %.1f |\n\n", s.Trials, s.P50Ms, s.P90Ms, s.MaxMs, s.MinMs)
	} else {
		fmt.Fprintf(w, "| 0 | — | — | — | — |\n\n")
	}
	fmt.Fprintf(w, "Percentiles are nearest-rank over the trials' gaps.\n\n")

	fmt.Fprintf(w, "| trial | killed leader | new leader | writer on | first write after via | gap ms | kill→write ms | last write→kill ms | failed writes | reconnects | new sessions | rejoin ms |\n")
	fmt.Fprintf(w, "|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	server := func(id int) string {
		if id == 0 {
			return "—"
		}
		return fmt.Sprintf("server.%d", id)
	}
	for _, t := range rep.Trials {
		if !t.measure {
			fmt.Fprintf(w, "| %d | %s | %s | %s | — | — | — | — | — | %d | %d | %.0f |\n",
				t.Trial, server(t.Killed), server(t.NewLeader), server(t.WriterFrom), t.Reconnects, t.NewSessions, t.RejoinMs)
			continue
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %.1f | %.1f | %.1f | %d | %d | %d | %.0f |\n",
			t.Trial, server(t.Killed), server(t.NewLeader), server(t.WriterFrom), server(t.WriterTo),
			t.GapMs, t.KillToWriteMs, t.LastBeforeKillMs, t.FailedWrites, t.Reconnects, t.NewSessions, t.RejoinMs)
	}
	for _, t := range rep.Trials {
		if t.Err != "" {
			fmt.Fprintf(w, "\n- trial %d FAILED: %s", t.Trial, t.Err)
		}
	}
	if rep.Err != "" {
		fmt.Fprintf(w, "\n- run ended early: %s", rep.Err)
	}
	fmt.Fprintln(w)
}

// failoverJSON is what every failover JSON line carries.
type failoverJSON struct {
	Kind             string  `json:"kind"`
	Start            string  `json:"start"`
	CPUs             int     `json:"cpus"`
	Target           string  `json:"target"`
	Servers          int     `json:"servers"`
	SessionTimeoutMs float64 `json:"session_timeout_ms"`
	NegotiatedMs     float64 `json:"negotiated_session_timeout_ms"`
	ValueSize        int     `json:"value_bytes"`
	launch.Timing
}

// WriteFailoverJSONLines writes one JSON object per trial ("kind":
// "trial") and a summary ("kind": "summary") with every gap.
func WriteFailoverJSONLines(w io.Writer, rep *Report) error {
	common := failoverJSON{
		Start: rep.Start.UTC().Format(time.RFC3339), CPUs: rep.Env.CPUs, Target: rep.Target, Servers: rep.Servers,
		SessionTimeoutMs: MsOf(rep.SessionTimeout), NegotiatedMs: MsOf(rep.Negotiated), ValueSize: rep.ValueSize,
		Timing: rep.Timing.OrDefault(),
	}
	enc := json.NewEncoder(w)
	for _, t := range rep.Trials {
		c := common
		c.Kind = "trial"
		if err := enc.Encode(struct {
			failoverJSON
			FailoverTrial
		}{c, t}); err != nil {
			return err
		}
	}
	c := common
	c.Kind = "summary"
	gaps := []float64{}
	for _, g := range rep.Gaps() {
		gaps = append(gaps, MsOf(g))
	}
	return enc.Encode(struct {
		failoverJSON
		GapSummary
		GapsMs []float64 `json:"gaps_ms"`
		Err    string    `json:"error,omitempty"`
	}{c, rep.Summary(), gaps, rep.Err})
}

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WriteFailoverMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WriteFailoverJSONLines(w, r) }
