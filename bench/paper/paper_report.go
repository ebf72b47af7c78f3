package paper

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/bench"
)

// Report is the outcome of Paper: the ZooKeeper paper's Tables 2 and
// 3 (Hunt et al., USENIX ATC 2010, §5.2 and §5.3), measured at a scale
// this machine can run.
type Report struct {
	Start   time.Time
	Env     bench.Env
	Command string
	// Creates is the creates per worker of Table 2, ValueSize their data.
	Creates   int
	ValueSize int
	// CellTimeout bounds each cell; a cell cut short says so.
	CellTimeout time.Duration
	Ensembles   []PaperEnsemble
	Creates2    []CreateCell
	Barriers3   []BarrierCell
	// Err is the failure that ended the run early, if any.
	Err string
}

// PaperEnsemble is one ensemble the run started.
type PaperEnsemble struct {
	Target  string   `json:"target"`
	Servers int      `json:"servers"`
	Version string   `json:"version,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Err     string   `json:"error,omitempty"`
}

// CreateCell is one cell of Table 2: Workers workers, each creating
// Nodes one at a time and deleting each asynchronously.
type CreateCell struct {
	Target  string `json:"target"`
	Servers int    `json:"servers"`
	Workers int    `json:"workers"`
	// Creates is the creates that succeeded, Planned those asked for.
	Creates int `json:"creates"`
	Planned int `json:"planned"`
	// DeleteErrors counts asynchronous deletes that failed.
	DeleteErrors int     `json:"delete_errors"`
	WallMs       float64 `json:"wall_ms"`
	AvgMs        float64 `json:"avg_latency_ms"`
	P50Ms        float64 `json:"p50_latency_ms"`
	P99Ms        float64 `json:"p99_latency_ms"`
	MaxMs        float64 `json:"max_latency_ms"`
	// PerSec is Creates over the wall time, the paper's Table 2 measure.
	PerSec float64 `json:"creates_per_sec"`
	// PaperPerSec is the paper's value for the same workers and servers,
	// 0 where the paper has none.
	PaperPerSec float64 `json:"paper_creates_per_sec,omitempty"`
	// Truncated says the cell timeout ended it before Planned.
	Truncated bool   `json:"truncated,omitempty"`
	Err       string `json:"error,omitempty"`
}

// BarrierCell is one cell of Table 3: Clients clients each entering
// Barriers double barriers in succession and then leaving them all.
type BarrierCell struct {
	Target   string `json:"target"`
	Servers  int    `json:"servers"`
	Clients  int    `json:"clients"`
	Barriers int    `json:"barriers"`
	// Finished is the clients that left every barrier.
	Finished int `json:"finished"`
	// AvgClientSec is the mean over clients of the time each took to
	// Finish (the paper's measure); WallSec until the last finished.
	AvgClientSec float64 `json:"avg_client_sec"`
	WallSec      float64 `json:"wall_sec"`
	// BarriersPerSec is Barriers over WallSec; OpsPerSec the enter and
	// leave calls of all clients over WallSec (the paper's "barrier
	// operations" throughput).
	BarriersPerSec float64 `json:"barriers_per_sec"`
	OpsPerSec      float64 `json:"barrier_ops_per_sec"`
	// PaperSec is the paper's time for PaperClients and PaperBarriers,
	// the unscaled cell this one stands for; 0 where the paper has none.
	PaperClients  int     `json:"paper_clients"`
	PaperBarriers int     `json:"paper_barriers"`
	PaperSec      float64 `json:"paper_sec,omitempty"`
	Err           string  `json:"error,omitempty"`
}

// Scale factors between the paper's Table 3 and the defaults here.
const (
	paperClientScale  = 5
	paperBarrierScale = 10
)

// paperTable2 is the paper's Table 2 (creates/s) by servers, then workers.
var paperTable2 = map[int]map[int]float64{
	3: {1: 776, 10: 2074, 20: 2740},
	5: {1: 748, 10: 1832, 20: 2336},
	7: {1: 758, 10: 1572, 20: 1934},
	9: {1: 711, 10: 1540, 20: 1890},
}

// paperTable3 is the paper's Table 3 (seconds) by barriers, then clients.
var paperTable3 = map[int]map[int]float64{
	200:  {50: 9.4, 100: 19.8, 200: 41.0},
	400:  {50: 16.4, 100: 34.1, 200: 62.0},
	800:  {50: 28.9, 100: 55.9, 200: 112.1},
	1600: {50: 54.0, 100: 102.7, 200: 234.4},
}

// createSample is what one Table 2 worker measured.
type createSample struct {
	latencies    []time.Duration
	deleteErrors int
	err          error
}

// aggregateCreates fills c's measures from the workers' samples and the
// wall time from the first create to the last.
func aggregateCreates(c *CreateCell, samples []createSample, wall time.Duration) {
	var all []time.Duration
	var errs []string
	for _, s := range samples {
		all = append(all, s.latencies...)
		c.DeleteErrors += s.deleteErrors
		if s.err != nil {
			errs = append(errs, s.err.Error())
		}
	}
	c.Creates = len(all)
	c.WallMs = paperMs(wall)
	if len(errs) > 0 {
		c.Err = joinErrs(errs)
	}
	if c.Creates < c.Planned && c.Err == "" {
		c.Truncated = true
	}
	c.PaperPerSec = paperTable2[c.Servers][c.Workers]
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	c.AvgMs = paperMs(sum) / float64(len(all))
	c.P50Ms = paperMs(quantile(all, 0.50))
	c.P99Ms = paperMs(quantile(all, 0.99))
	c.MaxMs = paperMs(all[len(all)-1])
	if wall > 0 {
		c.PerSec = float64(len(all)) / wall.Seconds()
	}
}

// aggregateBarriers fills c's measures from each client's time to finish
// (0 for a client that did not) and the wall time.
func aggregateBarriers(c *BarrierCell, finish []time.Duration, errs []error, wall time.Duration) {
	var sum time.Duration
	for _, d := range finish {
		if d > 0 {
			c.Finished++
			sum += d
		}
	}
	var es []string
	for _, e := range errs {
		if e != nil {
			es = append(es, e.Error())
		}
	}
	if len(es) > 0 {
		c.Err = joinErrs(es)
	}
	c.PaperClients, c.PaperBarriers = c.Clients*paperClientScale, c.Barriers*paperBarrierScale
	c.PaperSec = paperTable3[c.PaperBarriers][c.PaperClients]
	if c.Finished > 0 {
		c.AvgClientSec = sum.Seconds() / float64(c.Finished)
	}
	c.WallSec = wall.Seconds()
	if c.Finished == c.Clients && wall > 0 {
		c.BarriersPerSec = float64(c.Barriers) / wall.Seconds()
		c.OpsPerSec = float64(2*c.Barriers*c.Clients) / wall.Seconds()
	}
}

// quantile is the q-quantile of sorted d (nearest rank).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(q*float64(len(d))+0.999999) - 1
	return d[max(0, min(i, len(d)-1))]
}

func paperMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// joinErrs joins the distinct messages, at most maxErrs of them.
func joinErrs(s []string) string {
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) > maxErrs {
		return strings.Join(s[:maxErrs], "; ") + fmt.Sprintf("; and %d more", len(s)-maxErrs)
	}
	return strings.Join(s, "; ")
}

const maxErrs = 3

// Markdown writes the report for people.
func (r *Report) Markdown(w io.Writer) { WritePaperMarkdown(w, r) }

// JSONLines writes the report one JSON object a line.
func (r *Report) JSONLines(w io.Writer) error { return WritePaperJSONLines(w, r) }

// WritePaperMarkdown writes r as Markdown: the command, the scaling, and
// one table per paper table.
func WritePaperMarkdown(w io.Writer, r *Report) {
	fmt.Fprintf(w, "# The ZooKeeper paper's Tables 2 and 3, scaled down\n\n")
	fmt.Fprintf(w, "Hunt, Konar, Junqueira, Reed: *ZooKeeper: Wait-free coordination for Internet-scale systems*, USENIX ATC 2010, §5.2 (Table 2) and §5.3 (Table 3). ")
	fmt.Fprintf(w, "Measured with corral's Go client (`client/`, `client/recipes.DoubleBarrier`) against ensembles on 127.0.0.1.\n\n")
	fmt.Fprintf(w, "Command: `%s`\n\n", r.Command)
	fmt.Fprintf(w, "Started %s; %s/%s, %d CPUs, GOMAXPROCS %d, %s, load average %s. Each ensemble's members, and all clients, share these CPUs.\n\n",
		r.Start.UTC().Format(time.RFC3339), r.Env.GOOS, r.Env.GOARCH, r.Env.CPUs, r.Env.GOMAXPROCS, r.Env.GoVersion, orDash(r.Env.LoadAvg))
	fmt.Fprintf(w, "Scaling: the paper ran 50,000 creates per worker on 3, 5, 7 and 9 dedicated servers, and 50, 100 and 200 clients through 200 to 1600 barriers. ")
	fmt.Fprintf(w, "Here each worker makes %d creates of %d bytes, and Table 3 runs clients and barriers scaled down %d× and %d× (the paper column is the unscaled cell). ",
		r.Creates, r.ValueSize, paperClientScale, paperBarrierScale)
	fmt.Fprintf(w, "Every cell is bounded by %v; one cut short is marked. Single runs, not the paper's averages of five.\n\n", r.CellTimeout)
	if r.Err != "" {
		fmt.Fprintf(w, "**The run ended early:** %s\n\n", r.Err)
	}
	if len(r.Ensembles) > 0 {
		fmt.Fprintf(w, "| target | servers | version |\n|---|---:|---|\n")
		for _, e := range r.Ensembles {
			v := orDash(e.Version)
			if e.Err != "" {
				v = "failed: " + e.Err
			}
			fmt.Fprintf(w, "| %s | %d | %s |\n", e.Target, e.Servers, v)
		}
		fmt.Fprintln(w)
	}
	if len(r.Creates2) > 0 {
		fmt.Fprintf(w, "## Table 2: create latency\n\n")
		fmt.Fprintf(w, "Each worker has its own session; it sends a create, waits for it, sends an asynchronous delete of the new node, and starts the next create. ")
		fmt.Fprintf(w, "Latency is create call to reply; creates/s is all workers' creates over the wall time (the paper's measure; its 1-worker value implies a 1.2 ms average latency on 3 servers).\n\n")
		fmt.Fprintf(w, "| target | servers | workers | creates | avg ms | p50 ms | p99 ms | max ms | creates/s | paper creates/s | note |\n")
		fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, c := range r.Creates2 {
			fmt.Fprintf(w, "| %s | %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %.0f | %s | %s |\n",
				c.Target, c.Servers, c.Workers, c.Creates, c.AvgMs, c.P50Ms, c.P99Ms, c.MaxMs, c.PerSec,
				paperNum(c.PaperPerSec, "%.0f"), createNote(c))
		}
		fmt.Fprintln(w)
	}
	if len(r.Barriers3) > 0 {
		fmt.Fprintf(w, "## Table 3: double barriers\n\n")
		fmt.Fprintf(w, "Each client has its own session; it enters barriers 1..b in succession (each waits for all clients), then leaves them all in succession. ")
		fmt.Fprintf(w, "Time is the mean over clients of each one's time to finish (the paper's measure); barrier ops/s counts every client's enter and leave calls.\n\n")
		fmt.Fprintf(w, "| target | servers | clients | barriers | avg client s | wall s | barriers/s | barrier ops/s | paper cell (clients×barriers) | paper s | note |\n")
		fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n")
		for _, c := range r.Barriers3 {
			note := ""
			switch {
			case c.Err != "":
				note = fmt.Sprintf("%d of %d clients finished: %s", c.Finished, c.Clients, c.Err)
			case c.Finished < c.Clients:
				note = fmt.Sprintf("%d of %d clients finished", c.Finished, c.Clients)
			}
			fmt.Fprintf(w, "| %s | %d | %d | %d | %.2f | %.2f | %.1f | %.0f | %d×%d | %s | %s |\n",
				c.Target, c.Servers, c.Clients, c.Barriers, c.AvgClientSec, c.WallSec, c.BarriersPerSec, c.OpsPerSec,
				c.PaperClients, c.PaperBarriers, paperNum(c.PaperSec, "%.1f"), note)
		}
		fmt.Fprintf(w, "\nThe paper reports 1,950 to 3,100 barrier operations (enter and leave) per second over all its cells.\n")
	}
}

func createNote(c CreateCell) string {
	var n []string
	if c.Truncated {
		n = append(n, fmt.Sprintf("cut short at %d of %d", c.Creates, c.Planned))
	}
	if c.DeleteErrors > 0 {
		n = append(n, fmt.Sprintf("%d deletes failed", c.DeleteErrors))
	}
	if c.Err != "" {
		n = append(n, "error: "+c.Err)
	}
	return strings.Join(n, "; ")
}

func paperNum(v float64, f string) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf(f, v)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// WritePaperJSONLines writes one JSON object per line: the run, each
// ensemble, then each cell, each tagged with its kind.
func WritePaperJSONLines(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	run := struct {
		Kind        string  `json:"kind"`
		Start       string  `json:"start"`
		Command     string  `json:"command"`
		Creates     int     `json:"creates_per_worker"`
		ValueSize   int     `json:"value_size"`
		CellTimeout float64 `json:"cell_timeout_sec"`
		ClientScale int     `json:"table3_client_scale"`
		BarrScale   int     `json:"table3_barrier_scale"`
		CPUs        int     `json:"cpus"`
		LoadAvg     string  `json:"loadavg,omitempty"`
		Err         string  `json:"error,omitempty"`
	}{"run", r.Start.UTC().Format(time.RFC3339), r.Command, r.Creates, r.ValueSize, r.CellTimeout.Seconds(),
		paperClientScale, paperBarrierScale, r.Env.CPUs, r.Env.LoadAvg, r.Err}
	if err := enc.Encode(run); err != nil {
		return err
	}
	for _, e := range r.Ensembles {
		if err := enc.Encode(struct {
			Kind string `json:"kind"`
			PaperEnsemble
		}{"ensemble", e}); err != nil {
			return err
		}
	}
	for _, c := range r.Creates2 {
		if err := enc.Encode(struct {
			Kind string `json:"kind"`
			CreateCell
		}{"table2", c}); err != nil {
			return err
		}
	}
	for _, c := range r.Barriers3 {
		if err := enc.Encode(struct {
			Kind string `json:"kind"`
			BarrierCell
		}{"table3", c}); err != nil {
			return err
		}
	}
	return nil
}
