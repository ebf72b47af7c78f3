// Package compare is `corral-bench compare` and `run`: corral and Apache
// ZooKeeper started in turn from one zoo.cfg (standalone or an ensemble)
// and measured under the same phases (create, set, get, seqcreate), once
// or --repeat times interleaved, with the Markdown table of ratios and the
// JSON lines of every phase (Config, DefaultConfig, Compare, Report); Run
// (RunConfig) measures servers already up.
package compare
