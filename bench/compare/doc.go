// Package compare is `corral-bench compare` and `run`: corral and Apache
// ZooKeeper started in turn from one zoo.cfg (standalone or an ensemble)
// and measured under the same phases (create, set, get, seqcreate), once
// or --repeat times interleaved, with the Markdown table of ratios and the
// JSON lines of every phase (Config, DefaultConfig, Compare, Report); Run
// (RunConfig) measures servers already up. Compare first runs the floor
// probe (package floor) and states each sequential create as a multiple
// of it; its phases are driven by the load generator or, with
// Config.Client ClientGozk, by go-zookeeper (gozk.go); a go-zookeeper
// report adds each phase's throughput against the bound the machine's
// CPUs set through that client (cpubound.go).
package compare
