// Package ycsb is `corral-bench ycsb`: YCSB's core workloads A-F and the
// ZooKeeper study's S over 1 KB records stored one per znode, with YCSB's
// generators reproduced draw for draw (Config, DefaultConfig, Run, Report).
package ycsb
