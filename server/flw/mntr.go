package flw

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// renderMntr is MonitorCommand: "zk_<name>\t<value>\n" per metric.
// ZooKeeper prints Long and Integer values as integers, other Numbers as
// doubles (Double.toString) and everything else with toString.
func renderMntr(b *bytes.Buffer, s *State) {
	for _, m := range s.Metrics {
		b.WriteString("zk_")
		b.WriteString(m.Name)
		b.WriteByte('\t')
		b.WriteString(metricValue(m.Value))
		b.WriteByte('\n')
	}
}

func metricValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case int:
		return strconv.FormatInt(int64(x), 10)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint:
		return strconv.FormatUint(uint64(x), 10)
	case uint8:
		return strconv.FormatUint(uint64(x), 10)
	case uint16:
		return strconv.FormatUint(uint64(x), 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float32:
		// Float.doubleValue widens exactly: 0.1f prints 0.10000000149011612.
		return FormatDouble(float64(x))
	case float64:
		return FormatDouble(x)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// DefaultMetricNames returns, without the "zk_" prefix, the mntr keys
// monitoring tools look for first (PROTOCOL §14.2), in the order ZooKeeper
// 3.9.3 prints its first lines: version and server_state come from the
// server itself, the rest are its registered gauges. The server must fill
// each of these; leaders add LeaderMetricNames.
func DefaultMetricNames() []string {
	return []string{
		"version",
		"server_state",
		"ephemerals_count",
		"num_alive_connections",
		"avg_latency",
		"outstanding_requests",
		"znode_count",
		"global_sessions",
		"non_mtls_remote_conn_count",
		"last_client_response_size",
		"packets_sent",
		"packets_received",
		"max_client_response_size",
		"connection_drop_probability",
		"watch_count",
		"auth_failed_count",
		"min_latency",
		"max_file_descriptor_count",
		"approximate_data_size",
		"open_file_descriptor_count",
		"local_sessions",
		"uptime",
		"max_latency",
		"outstanding_tls_handshake",
		"min_client_response_size",
		"non_mtls_local_conn_count",
	}
}

// LeaderMetricNames returns the gauges a leader adds to mntr.
func LeaderMetricNames() []string {
	return []string{
		"learners",
		"synced_followers",
		"synced_non_voting_followers",
		"synced_observers",
		"pending_syncs",
		"leader_uptime",
		"last_proposal_size",
		"max_proposal_size",
		"min_proposal_size",
	}
}

// Summary returns the five mntr lines of a ZooKeeper summary metric
// (AvgMinMaxCounter) in its order: avg_, min_, max_, cnt_, sum_<name>.
// min and max are the extremes seen (0 when count is 0); avg is RoundAvg.
func Summary(name string, count, sum, min, max int64) []Metric {
	return []Metric{
		{"avg_" + name, RoundAvg(sum, count)},
		{"min_" + name, min},
		{"max_" + name, max},
		{"cnt_" + name, count},
		{"sum_" + name, sum},
	}
}

// RoundAvg is ZooKeeper's AvgMinMaxCounter.getAvg: total/count as a
// double, rounded to four decimal places HALF_UP (on the double's exact
// binary value, as new BigDecimal(double) does); 0 when count <= 0. srvr's
// and mntr's average latency are printed from this value: 1/3 prints
// 0.3333, not 0.3333333333333333.
func RoundAvg(total, count int64) float64 {
	if count <= 0 {
		return 0
	}
	return round4(float64(total) / float64(count))
}

// round4 rounds x to four decimal places, HALF_UP on its exact value, and
// returns the double nearest the result. It is idempotent, so a value that
// is already rounded passes through unchanged.
func round4(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	r := new(big.Rat).SetFloat64(math.Abs(x))
	r.Mul(r, big.NewRat(10000, 1))
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom()) // floor: r is positive
	q := new(big.Rat).SetFrac(n, big.NewInt(10000))
	f, _ := q.Float64()
	if x < 0 && f != 0 { // BigDecimal has no negative zero
		f = -f
	}
	return f
}

// Percentiles returns the four lines a ZooKeeper advanced summary
// (AvgMinMaxPercentileCounter) prints after Summary's five: p50_, p95_,
// p99_ and p999_<name>, each rounded to a whole number (Math.round).
func Percentiles(name string, p50, p95, p99, p999 float64) []Metric {
	r := func(x float64) int64 { return int64(math.Floor(x + 0.5)) }
	return []Metric{
		{"p50_" + name, r(p50)},
		{"p95_" + name, r(p95)},
		{"p99_" + name, r(p99)},
		{"p999_" + name, r(p999)},
	}
}
