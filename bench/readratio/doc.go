// Package readratio is `corral-bench readratio`: the ZooKeeper paper's
// saturated throughput against the share of reads per ensemble size (Fig.
// 5 and Table 1; Fig. 6 with LeaderOnly) (Config, DefaultConfig, Run, Report).
package readratio
