package kvoutage

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/kv"
)

// OutageTrial is one kill. Offsets (…From, Elected, Recorded, FirstOK)
// are from the kill; unknown moments are 0, unknown parts -1.
type OutageTrial struct {
	Kill   int    `json:"kill"`
	RG     uint64 `json:"rg"`
	Leader uint64 `json:"killed_leader"`
	Epoch  uint64 `json:"killed_epoch"`
	PID    int    `json:"killed_pid"`
	// KillAt is the kill's offset from the trial's start.
	KillAt    time.Duration `json:"kill_at_ns"`
	NewLeader uint64        `json:"new_leader"`
	NewEpoch  uint64        `json:"new_epoch"`
	// Outage is the longest window without a successful operation on the
	// killed RG's rows; Unended if none succeeded after the kill.
	Outage     time.Duration `json:"outage_ns"`
	OutageFrom time.Duration `json:"outage_from_ns"`
	Unended    bool          `json:"unended,omitempty"`
	// Low is the longest run of 100 ms buckets below LowFrac of
	// PreKillMean (ops per bucket), from LowFrom.
	Low         time.Duration `json:"low_ns"`
	LowFrom     time.Duration `json:"low_from_ns"`
	PreKillMean float64       `json:"pre_kill_ops_per_100ms"`
	// Elected: a member logged it leads; Recorded: the mtime of the CM's
	// first record of a newer epoch;
	// FirstOK: the client's first success on the RG after the election
	// (after the outage if the election's moment is unknown).
	Elected   time.Duration `json:"elected_ns"`
	Recorded  time.Duration `json:"cm_recorded_ns"`
	FirstOK   time.Duration `json:"first_ok_ns"`
	Election  time.Duration `json:"election_ns"`
	CM        time.Duration `json:"cm_ns"`
	Reconnect time.Duration `json:"reconnect_ns"`
	// OtherRGsGap is the longest gap after the kill of the other RGs.
	OtherRGsGap time.Duration    `json:"other_rgs_gap_ns"`
	Ops         int64            `json:"ops"`
	Errors      map[string]int64 `json:"errors"`
	// Series is successful operations per 100 ms from the trial's start.
	Series []int64 `json:"series_ops_per_100ms"`
}

// OutageReport is the experiment's outcome.
type OutageReport struct {
	Config  OutageConfig
	Started time.Time
	Nodes   []kv.MemberInfo
	Trials  []OutageTrial
}

// Headings of the report's tables, as `corral-bench report-md` finds
// them.
const (
	HeadingOutageKills  = "## Outage per kill (ms from the kill)"
	HeadingOutageMedian = "## Median (min-max) over the kills, ms"
)

func msOf(d time.Duration) string {
	if d < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
}

// Markdown writes the report.
func (r *OutageReport) Markdown(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "# corral bench kv-outage: SIGKILL of an RG leader under a read-only Zipf load\n\n")
	fmt.Fprintf(w, "- started: %s\n- command: `%s`\n\n", r.Started.Format(time.RFC3339), c.CommandLine)
	fmt.Fprintf(w, "%d RG(s) of %d, %d records, %d threads, warm-up %v, %v after each kill, %d kill(s), durability %s, tickTime %d ms, op timeout %v.\n\n",
		c.Groups, c.Members, c.Records, c.Threads, c.Warmup, c.After, c.Kills, c.Durability, c.TickTimeMs, c.OpTimeout)
	for _, n := range r.Nodes {
		fmt.Fprintf(w, "- %s: pid %d, %s\n", n.Name, n.PID, n.Addr)
	}
	fmt.Fprintln(w, "\nPaper (ACaZoo, Figs. 16-17): outage 3.24 s = 220 ms election + 970 ms CM propagation + 2 s reconnect. Target: outage ≤ 300 ms.")
	fmt.Fprintf(w, "\n%s\n", HeadingOutageKills)
	fmt.Fprintln(w, "\n| kill | killed leader (epoch) | new leader (epoch) | outage | low | election | CM | reconnect | other RGs' gap | ops | errors |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, t := range r.Trials {
		out := msOf(t.Outage)
		if t.Unended {
			out = "≥" + out + " (unended)"
		}
		others := "-" // one RG: no other
		if c.Groups > 1 {
			others = msOf(t.OtherRGsGap)
		}
		fmt.Fprintf(w, "| %d | %d (%d) | %d (%d) | %s | %s | %s | %s | %s | %s | %d | %s |\n",
			t.Kill, t.Leader, t.Epoch, t.NewLeader, t.NewEpoch, out, msOf(t.Low),
			msOf(t.Election), msOf(t.CM), signedMs(t.Reconnect, t.Recorded > 0 && t.FirstOK > 0), others, t.Ops, errorsOf(t.Errors))
	}
	fmt.Fprintf(w, "\nlow: the longest run of 100 ms buckets below %.0f%% of the pre-kill mean. election: kill → a member logs `state=leading`; CM: → the mtime of the CM's first record of a newer leader; reconnect: → the first successful read of the RG after the election (negative: the client found the leader by a NotLeader answer before the CM recorded it).\n", c.LowFrac*100)
	fmt.Fprintf(w, "\n%s\n", HeadingOutageMedian)
	fmt.Fprintln(w, "\n| outage | low | election | CM | reconnect |\n|---|---|---|---|---|")
	pick := func(f func(OutageTrial) time.Duration) string {
		var xs []time.Duration
		for _, t := range r.Trials {
			xs = append(xs, f(t))
		}
		s := SpreadOf(xs)
		if s.N == 0 {
			return "?"
		}
		return fmt.Sprintf("%s (%s-%s)", msOf(s.Median), msOf(s.Min), msOf(s.Max))
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n",
		pick(func(t OutageTrial) time.Duration { return t.Outage }),
		pick(func(t OutageTrial) time.Duration { return t.Low }),
		pick(func(t OutageTrial) time.Duration { return t.Election }),
		pick(func(t OutageTrial) time.Duration { return t.CM }),
		pick(func(t OutageTrial) time.Duration { return t.Reconnect }))
	for _, t := range r.Trials {
		fmt.Fprintf(w, "\n## Kill %d: successful ops per 100 ms (kill at %.1f s)\n\n```\n", t.Kill, t.KillAt.Seconds())
		for i := 0; i < len(t.Series); i += 10 {
			fmt.Fprintf(w, "%5.1fs", float64(i)*kv.SeriesBucket.Seconds())
			for _, v := range t.Series[i:min(i+10, len(t.Series))] {
				fmt.Fprintf(w, " %6d", v)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "```")
	}
}

func signedMs(d time.Duration, known bool) string {
	if !known {
		return "?"
	}
	return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
}

func errorsOf(m map[string]int64) string {
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// JSONLines writes one object per kill.
func (r *OutageReport) JSONLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, t := range r.Trials {
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return nil
}

// SeriesCSV writes kill,t_ms,ops per 100 ms (t from each trial's
// start) for plotting.
func (r *OutageReport) SeriesCSV(w io.Writer) {
	fmt.Fprintln(w, "kill,t_ms,t_from_kill_ms,ops")
	for _, t := range r.Trials {
		for i, v := range t.Series {
			at := time.Duration(i) * kv.SeriesBucket
			fmt.Fprintf(w, "%d,%d,%d,%d\n", t.Kill, at.Milliseconds(), (at - t.KillAt).Milliseconds(), v)
		}
	}
}
