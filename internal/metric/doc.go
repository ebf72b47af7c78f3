// Package metric holds the server's counters and summaries in ZooKeeper's
// shape: a Counter is ServerMetrics' Counter, a Summary its
// AvgMinMaxCounter (DetailBasic) or AvgMinMaxPercentileCounter
// (DetailAdvanced). One Registry per server owns them; mntr
// (server/flw) and the Prometheus endpoint (admin) both read it, so the
// two never disagree and the hot path feeds one structure.
//
// Everything is lock-free on the observing side: a Counter is one atomic
// add, a Summary.Observe a handful (count, sum, min, max, one histogram
// bucket). Quantiles come from a log-linear histogram over a sliding
// window of one to two minutes (Window), accurate to one part in eight
// above 16 and exact below; count, sum, min and max are cumulative since
// start or the last Reset, as ZooKeeper's are.
package metric
