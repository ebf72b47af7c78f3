// Package failures is `corral-bench failures`: the ZooKeeper paper's
// Fig. 8, throughput over time of a read/write mix while members of the
// ensemble are killed and restarted on a schedule (Config,
// DefaultConfig, Run, Report).
package failures
