package compare

import (
	"fmt"
	"io"

	"github.com/corral-db/corral/bench/launch"
)

// The headings of writeCPUBound's tables (BENCHMARKS.md picks them).
const (
	HeadingCPUBound   = "### Throughput against the CPU the client leaves"
	HeadingBoundRatio = "#### corral's bound ÷ ZooKeeper's"
)

// writeCPUBound writes, for a run driven by go-zookeeper, each phase's
// throughput against the most the machine's CPUs allow through that
// client: every request costs the server's CPU and the client's, both on
// the same CPUs, so no server answers more than CPUs ÷ (server + client
// CPU per op) requests a second. A target near its bound is held back by
// the CPU, its own and the client's; between two targets, the ratio of
// their bounds is the margin the client's CPU leaves the faster one
// (issue 27: "corral's throughput ≥ ZooKeeper's by the margin the
// client's own CPU leaves").
func writeCPUBound(w io.Writer, rep *Report) {
	if clientOf(rep) != ClientGozk || rep.Env.CPUs <= 0 {
		return
	}
	type bound struct {
		perOp, ops float64
	}
	bounds := map[string]map[string]bound{} // phase → target label → bound
	var phases []string
	var rows [][]string
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Ops <= 0 || r.ServerCPU == nil || r.Err != "" {
			continue
		}
		server := *r.ServerCPU / float64(r.Ops) * 1e6
		client := r.LoadgenCPU / float64(r.Ops) * 1e6
		perOp := server + client
		if perOp <= 0 {
			continue
		}
		b := bound{perOp: perOp, ops: float64(rep.Env.CPUs) * 1e6 / perOp}
		if bounds[r.Phase] == nil {
			bounds[r.Phase] = map[string]bound{}
			phases = append(phases, r.Phase)
		}
		bounds[r.Phase][r.Label()] = b
		rows = append(rows, []string{r.Phase, r.Label(), fmt.Sprintf("%.1f", server), fmt.Sprintf("%.1f", client),
			fmt.Sprintf("%.0f", b.ops), fmt.Sprintf("%.0f", r.OpsPerSec), fmt.Sprintf("%.0f%%", r.OpsPerSec/b.ops*100)})
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n\n", HeadingCPUBound)
	fmt.Fprintf(w, "Each request costs the server's CPU and go-zookeeper's, both on the machine's %d CPUs, so no server answers "+
		"more than %d × 10⁶ ÷ (server + client CPU µs per op) requests a second through this client (the bound). "+
		"A target near its bound is held back by the CPU; corral's margin over ZooKeeper can be at most the ratio of the bounds.\n\n",
		rep.Env.CPUs, rep.Env.CPUs)
	fmt.Fprintln(w, "| phase | target | server CPU µs/op | client CPU µs/op | bound ops/s | ops/s | of bound |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6])
	}
	var ratios []string
	for _, ph := range phases {
		c, okc := bounds[ph][launch.TargetCorral]
		z, okz := bounds[ph][launch.TargetZooKeeper]
		if okc && okz {
			ratios = append(ratios, fmt.Sprintf("| %s | %.2fx |", ph, c.ops/z.ops))
		}
	}
	if len(ratios) > 0 {
		fmt.Fprintf(w, "\n%s\n\n", HeadingBoundRatio)
		fmt.Fprintln(w, "The margin the client's CPU leaves corral over ZooKeeper; the measured ratio is in the first table.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| phase | bound ratio |")
		fmt.Fprintln(w, "|---|---:|")
		for _, r := range ratios {
			fmt.Fprintln(w, r)
		}
	}
}
