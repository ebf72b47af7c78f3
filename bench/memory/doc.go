// Package memory is `corral bench memory`: the resident memory of each
// member of an ensemble holding N znodes of S bytes, beside the raw bytes
// of paths + data (mntr's approximate_data_size), for corral and
// ZooKeeper in the same run (issue 27's acceptance: resident memory per
// member <= 2x the raw bytes and <= 1/3 of ZooKeeper's).
package memory
