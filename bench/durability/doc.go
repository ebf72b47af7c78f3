// Package durability is `corral-bench durability`: the evaluation of the
// diskless thesis (chapter 5) over corral's sync, async and diskless modes
// and ZooKeeper with and without forceSync: create and getData throughput
// over time, CPU at a fixed write rate, a message queue, snapshot latency
// and restoration after a leader kill against the tree's size
// (Config, DefaultConfig, Run, Report).
package durability
