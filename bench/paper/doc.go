// Package paper is `corral-bench paper`: the ZooKeeper paper's Tables 2
// (create latency) and 3 (barriers), scaled to this machine (Config,
// DefaultConfig, Run, Report).
package paper
