package load

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ServerFsyncs is one server's log fsyncs in a measured interval.
type ServerFsyncs struct {
	Server string `json:"server"`
	Fsyncs int64  `json:"fsyncs"`
}

// errNoFsyncTime: the server's mntr has no zk_cnt_fsynctime (ZooKeeper 3.9
// and corral report it; an older server or a proxy may not).
var errNoFsyncTime = errors.New("bench: mntr has no zk_cnt_fsynctime")

// parseFsyncCount reads ZooKeeper's fsynctime count from mntr output:
// how many times the server has fsynced its transaction log.
func parseFsyncCount(out string) (int64, error) {
	v, ok := MntrValues(out)["zk_cnt_fsynctime"]
	if !ok {
		return 0, errNoFsyncTime
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("bench: zk_cnt_fsynctime %q is not a count", v)
	}
	return int64(f), nil
}

// fsyncCounts asks every server for its fsync count; nil if any cannot
// say (the phase then reports no fsync figures rather than partial ones).
func fsyncCounts(ctx context.Context, addrs []string) []int64 {
	if len(addrs) == 0 {
		return nil
	}
	out := make([]int64, len(addrs))
	for i, a := range addrs {
		s, err := FourLetter(ctx, a, "mntr")
		if err != nil {
			return nil
		}
		if out[i], err = parseFsyncCount(s); err != nil {
			return nil
		}
	}
	return out
}

// FsyncDeltas turns two fsyncCounts into per-server fsyncs in between.
func FsyncDeltas(addrs []string, before, after []int64) []ServerFsyncs {
	if len(before) != len(addrs) || len(after) != len(addrs) {
		return nil
	}
	out := make([]ServerFsyncs, len(addrs))
	for i, a := range addrs {
		out[i] = ServerFsyncs{Server: a, Fsyncs: max(0, after[i]-before[i])}
	}
	return out
}

// FsyncsPerMillion is the servers' fsyncs in the interval, summed, per
// million operations completed in it.
func FsyncsPerMillion(r *PhaseResult) (float64, bool) {
	if r.FsyncsEach == nil || r.Ops == 0 {
		return 0, false
	}
	var n int64
	for _, s := range r.FsyncsEach {
		n += s.Fsyncs
	}
	return float64(n) / float64(r.Ops) * 1e6, true
}

// MntrValues maps mntr's "zk_<name>\t<value>" lines, zk_ prefix kept.
func MntrValues(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "\t")
		if ok && strings.HasPrefix(k, "zk_") {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}
