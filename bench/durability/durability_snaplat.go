package durability

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/corral-db/corral/bench/launch"
	"github.com/corral-db/corral/bench/load"
)

// Snapshot latency against the size of the tree: the thesis's Fig. 5.3
// (section 5.3.1.2, Table A.4). Both servers report every snapshot's
// duration in mntr as ZooKeeper 3.9's SNAPSHOT_TIME summary
// (zk_{avg,min,max,cnt,sum}_snapshottime, whole milliseconds), so the
// benchmark reads them alike: the difference of cnt and sum across one
// snapshot is that snapshot's duration. Neither server snapshots on demand
// (ZooKeeper has no four-letter word for it), so with the tree at the
// wanted size the benchmark overwrites existing nodes (setData: the tree
// does not grow) until each member's own snapCount rule starts one, and
// stops writing as soon as a member's new snapshot file appears, so the
// snapshot runs without client load.

// DurSnapshot is one point of Fig. 5.3: the snapshots the members of one
// configuration wrote with the tree at one size.
type DurSnapshot struct {
	Config string `json:"config"`
	Server string `json:"server"`
	// Znodes is the size asked for; ZnodeCount the leader's zk_znode_count
	// when the measurement began (the servers' own nodes included).
	Znodes     int64 `json:"znodes"`
	ZnodeCount int64 `json:"znode_count"`
	// Members are what each member wrote.
	Members []DurSnapMember `json:"members"`
	// Ms is the mean of the members' mean snapshot durations; MinMs and
	// MaxMs the least and greatest member mean. Zero when no member
	// snapshotted.
	Ms    float64 `json:"ms"`
	MinMs float64 `json:"min_ms"`
	MaxMs float64 `json:"max_ms"`
	// FillWrites are the setData requests issued to make the members
	// snapshot, Seconds the time from the first of them until the last
	// member's snapshot was counted.
	FillWrites int64   `json:"fill_writes"`
	Seconds    float64 `json:"seconds"`
	Err        string  `json:"error,omitempty"`
}

// DurSnapMember is one member's snapshots at one tree size.
type DurSnapMember struct {
	ID   int    `json:"id"`
	Mode string `json:"mode,omitempty"`
	// Snapshots is how many its mntr counted during the measurement, Ms
	// their mean duration.
	Snapshots int64   `json:"snapshots"`
	Ms        float64 `json:"ms"`
	Err       string  `json:"error,omitempty"`
}

// snapTimes is one mntr reading of the snapshottime summary.
type snapTimes struct {
	Count, Sum, Min, Max int64
	Avg                  float64
}

// errNoSnapTime: the mntr output lacks the snapshottime summary (a server
// that does not report it, or one not serving).
var errNoSnapTime = errors.New("bench: mntr has no zk_cnt_snapshottime and zk_sum_snapshottime")

// parseSnapTimes reads the snapshottime summary from mntr output. cnt and
// sum are required (they are what a measurement uses); min, max and avg
// are read when present.
func parseSnapTimes(out string) (snapTimes, error) {
	m := load.MntrValues(out)
	var t snapTimes
	for _, f := range []struct {
		key      string
		dst      *int64
		required bool
	}{
		{"zk_cnt_snapshottime", &t.Count, true}, {"zk_sum_snapshottime", &t.Sum, true},
		{"zk_min_snapshottime", &t.Min, false}, {"zk_max_snapshottime", &t.Max, false},
	} {
		v, ok := m[f.key]
		if !ok {
			if f.required {
				return snapTimes{}, errNoSnapTime
			}
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return snapTimes{}, fmt.Errorf("bench: mntr %s = %q", f.key, v)
		}
		*f.dst = n
	}
	if v, ok := m["zk_avg_snapshottime"]; ok {
		a, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return snapTimes{}, fmt.Errorf("bench: mntr zk_avg_snapshottime = %q", v)
		}
		t.Avg = a
	}
	return t, nil
}

// since returns the snapshots counted between before and t and their
// mean duration in ms; n is 0 when there were none (or the counters went
// back: the server restarted).
func (t snapTimes) since(before snapTimes) (n int64, meanMs float64) {
	n = t.Count - before.Count
	if n <= 0 || t.Sum < before.Sum {
		return 0, 0
	}
	return n, float64(t.Sum-before.Sum) / float64(n)
}

// parseZnodeCount reads zk_znode_count from mntr output.
func parseZnodeCount(out string) (int64, error) {
	v, ok := load.MntrValues(out)["zk_znode_count"]
	if !ok {
		return 0, fmt.Errorf("bench: mntr has no zk_znode_count: %q", launch.FirstLine(out))
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bench: mntr zk_znode_count = %q", v)
	}
	return n, nil
}

// readSnapTimes asks addr for mntr and parses the snapshottime summary.
func readSnapTimes(ctx context.Context, addr string) (snapTimes, error) {
	out, err := load.FourLetter(ctx, addr, "mntr")
	if err != nil {
		return snapTimes{}, err
	}
	return parseSnapTimes(out)
}

// znodeCount asks addr for mntr and returns zk_znode_count.
func znodeCount(ctx context.Context, addr string) (int64, error) {
	out, err := load.FourLetter(ctx, addr, "mntr")
	if err != nil {
		return 0, err
	}
	return parseZnodeCount(out)
}

// snapFiles are the snapshot files in a member's data directory, by name
// without a ".tmp" suffix (corral writes snapshot.<zxid>.tmp and renames
// it; ZooKeeper writes snapshot.<zxid> in place), with their sizes. Both
// servers keep them in <dataDir>/version-2.
type snapFiles map[string]int64

func listSnapFiles(dataDir string) (snapFiles, error) {
	ents, err := os.ReadDir(filepath.Join(dataDir, "version-2"))
	if errors.Is(err, os.ErrNotExist) {
		return snapFiles{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := snapFiles{}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "snapshot.") || strings.HasSuffix(name, ".corrupt") {
			continue
		}
		var size int64
		if info, err := e.Info(); err == nil {
			size = info.Size()
		}
		out[strings.TrimSuffix(name, ".tmp")] += size
	}
	return out, nil
}

// newSince reports whether f holds a snapshot that before did not.
func (f snapFiles) newSince(before snapFiles) bool {
	for name := range f {
		if _, ok := before[name]; !ok {
			return true
		}
	}
	return false
}

// equal reports whether both list the same files with the same sizes.
func (f snapFiles) equal(g snapFiles) bool {
	if len(f) != len(g) {
		return false
	}
	for name, size := range f {
		if s, ok := g[name]; !ok || s != size {
			return false
		}
	}
	return true
}

// memberSnapState is one member's snapshot files and mntr summary.
type memberSnapState struct {
	files snapFiles
	times snapTimes
}

// Bounds of one snapshot measurement.
const (
	// snapQuiet is how long the members' snapshot files and counters must
	// stay unchanged before the measurement's baseline is taken: a
	// snapshot that began while the tree grew is over by then.
	snapQuiet = time.Second
	// snapSettleTimeout bounds that wait.
	snapSettleTimeout = 2 * time.Minute
	// The setData requests are sent in chunks of about snapFillChunkTime
	// (sized by the rate of the chunk before, within [snapFillMinChunk,
	// snapFillMaxChunk]), with a look at the members' data directories
	// after each: a snapshot that starts shares the machine with at most
	// the rest of its chunk. snapFillConns sessions with snapFillInflight
	// each send them.
	snapFillChunkTime = 100 * time.Millisecond
	snapFillMinChunk  = 200
	snapFillMaxChunk  = 5000
	snapFillConns     = 4
	snapFillInflight  = 64
	// snapMaxFill bounds the setData requests of one measurement: three
	// times ZooKeeper's default snapCount (100000), which triggers a
	// snapshot after between half and all of it.
	snapMaxFill = 300000
	// snapFillTimeout bounds the writing, snapWaitTimeout the wait for a
	// started snapshot to be counted.
	snapFillTimeout = 5 * time.Minute
	snapWaitTimeout = 5 * time.Minute
	snapPoll        = 100 * time.Millisecond
)

// snapProbe is what a snapshot measurement reads and writes: the live
// ensemble (liveSnapProbe) or, in tests, a simulation. Members are
// numbered from 0 in the ensemble's order.
type snapProbe interface {
	members() int
	files(i int) (snapFiles, error)
	times(ctx context.Context, i int) (snapTimes, error)
	// Fill issues about n setData requests and returns how many it did.
	fill(ctx context.Context, n int64) (int64, error)
}

// snapLimits are the waits and bounds of one measurement (snapshotLimits
// in a run; shorter in tests).
type snapLimits struct {
	quiet, poll, settleTimeout, waitTimeout, fillTimeout time.Duration
	maxFill                                              int64
	// spacing stretches the quiet wait to spacing times the longest
	// snapshot a member has reported (0: no stretch). corral starts no
	// snapshot sooner than four times the last one's duration after it
	// ended (server/storage.go), so on a big tree grown fast a fill that
	// began after a 1 s quiet could end before corral's rule allowed a
	// snapshot (seen at 1M znodes). ZooKeeper has no such rule; for it the
	// stretch only costs time.
	spacing float64
}

func snapshotLimits() snapLimits {
	return snapLimits{quiet: snapQuiet, poll: snapPoll, settleTimeout: snapSettleTimeout,
		waitTimeout: snapWaitTimeout, fillTimeout: snapFillTimeout, maxFill: snapMaxFill, spacing: 4.5}
}

// snapState reads every member's snapshot files and summary.
func snapState(ctx context.Context, p snapProbe) ([]memberSnapState, error) {
	st := make([]memberSnapState, p.members())
	for i := range st {
		f, err := p.files(i)
		if err != nil {
			return nil, err
		}
		t, err := p.times(ctx, i)
		if err != nil {
			return nil, err
		}
		st[i] = memberSnapState{files: f, times: t}
	}
	return st, nil
}

func sameSnapState(a, b []memberSnapState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].files.equal(b[i].files) || a[i].times != b[i].times {
			return false
		}
	}
	return true
}

// quietAfter is how long st must stay unchanged: lim.quiet, stretched by
// lim.spacing.
func (lim snapLimits) quietAfter(st []memberSnapState) time.Duration {
	q := lim.quiet
	for _, m := range st {
		q = max(q, time.Duration(lim.spacing*float64(m.times.Max))*time.Millisecond)
	}
	return q
}

// settleSnapshots waits until no member is writing a snapshot: files and
// counters unchanged for lim.quiet. It returns the last state read; err
// when the members could not be read or did not settle in time.
func settleSnapshots(ctx context.Context, p snapProbe, lim snapLimits) ([]memberSnapState, error) {
	deadline := time.Now().Add(lim.settleTimeout)
	last, err := snapState(ctx, p)
	if err != nil {
		return nil, err
	}
	since := time.Now()
	for time.Since(since) < lim.quietAfter(last) {
		if time.Now().After(deadline) {
			return last, fmt.Errorf("bench: snapshots still being written after %v", lim.settleTimeout)
		}
		if !load.SleepCtx(ctx, lim.poll) {
			return last, ctx.Err()
		}
		cur, err := snapState(ctx, p)
		if err != nil {
			return nil, err
		}
		if !sameSnapState(cur, last) {
			last, since = cur, time.Now()
		}
	}
	return last, nil
}

// measureSnapshot measures one snapshot per member with the tree at its
// current size (asked: n).
func (tr *durTree) measureSnapshot(ctx context.Context, n int64) DurSnapshot {
	res := DurSnapshot{Config: tr.target.Name, Server: tr.target.Server, Znodes: n}
	for _, m := range tr.ens.Members {
		res.Members = append(res.Members, DurSnapMember{ID: m.ID, Mode: tr.mode(m.ID)})
	}
	if c, err := znodeCount(ctx, tr.ens.Member(tr.leader).Addr); err == nil {
		res.ZnodeCount = c
	}
	measureSnapshots(ctx, liveSnapProbe{tr}, snapshotLimits(), &res, tr.cfg.Log)
	return res
}

// measureSnapshots fills res.Members (one per member, in order, IDs set)
// and the summary: it waits for the members to settle, takes their
// counters as the baseline, and writes until each has counted a snapshot,
// pausing after a chunk in which a member's new snapshot file appeared
// until that snapshot is counted.
func measureSnapshots(ctx context.Context, p snapProbe, lim snapLimits, res *DurSnapshot, log *slog.Logger) {
	fail := func(err error) {
		res.Err = err.Error()
	}
	base, err := settleSnapshots(ctx, p, lim)
	if err != nil {
		if base == nil {
			fail(err)
			return
		}
		log.Warn("measuring anyway", "config", res.Config, "err", err)
	}
	done := make([]bool, len(base))
	left := len(base)
	start := time.Now()
	chunk := int64(snapFillMinChunk)
	// record marks member i done if its counters moved.
	record := func(i int, t snapTimes) {
		if done[i] {
			return
		}
		if k, ms := t.since(base[i].times); k > 0 {
			res.Members[i].Snapshots, res.Members[i].Ms = k, ms
			done[i] = true
			left--
		}
	}
	for left > 0 {
		if err := ctx.Err(); err != nil {
			fail(err)
			return
		}
		if res.FillWrites >= lim.maxFill || time.Since(start) > lim.fillTimeout {
			break
		}
		t0 := time.Now()
		issued, err := p.fill(ctx, min(chunk, lim.maxFill-res.FillWrites))
		res.FillWrites += issued
		if err != nil {
			fail(err)
			return
		}
		chunk = nextFillChunk(issued, time.Since(t0))
		// A member that began a snapshot: stop writing until it is counted,
		// so it runs without client load.
		var started []int
		for i := range base {
			if done[i] {
				continue
			}
			f, err := p.files(i)
			if err != nil {
				fail(err)
				return
			}
			t, err := p.times(ctx, i)
			if err != nil {
				fail(err)
				return
			}
			record(i, t)
			if !done[i] && f.newSince(base[i].files) {
				started = append(started, i)
			}
		}
		for _, i := range started {
			wait := time.Now().Add(lim.waitTimeout)
			for !done[i] && time.Now().Before(wait) {
				if !load.SleepCtx(ctx, lim.poll) {
					fail(ctx.Err())
					return
				}
				t, err := p.times(ctx, i)
				if err != nil {
					fail(err)
					return
				}
				record(i, t)
			}
			if !done[i] {
				res.Members[i].Err = fmt.Sprintf("a new snapshot file appeared but mntr counted no snapshot in %v", lim.waitTimeout)
				done[i] = true
				left--
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	var sum float64
	k := 0
	for i := range res.Members {
		m := &res.Members[i]
		if m.Snapshots == 0 {
			if m.Err == "" {
				m.Err = fmt.Sprintf("no snapshot after %d setData requests in %.0f s", res.FillWrites, res.Seconds)
			}
			continue
		}
		if k == 0 || m.Ms < res.MinMs {
			res.MinMs = m.Ms
		}
		res.MaxMs = max(res.MaxMs, m.Ms)
		sum += m.Ms
		k++
	}
	if k == 0 {
		res.Err = "no member snapshotted"
		return
	}
	res.Ms = sum / float64(k)
}

// nextFillChunk sizes the next chunk of setData requests to take about
// snapFillChunkTime at the rate the last one ran (n in d).
func nextFillChunk(n int64, d time.Duration) int64 {
	if d <= 0 {
		return snapFillMaxChunk
	}
	c := int64(float64(n) * float64(snapFillChunkTime) / float64(d))
	return min(max(c, snapFillMinChunk), snapFillMaxChunk)
}

// liveSnapProbe reads a tree ensemble's members: their data directories
// and mntr; it writes through the ensemble's clients.
type liveSnapProbe struct{ tr *durTree }

func (p liveSnapProbe) members() int { return len(p.tr.ens.Members) }

func (p liveSnapProbe) files(i int) (snapFiles, error) {
	return listSnapFiles(p.tr.ens.Members[i].DataDir)
}

func (p liveSnapProbe) times(ctx context.Context, i int) (snapTimes, error) {
	m := p.tr.ens.Members[i]
	t, err := readSnapTimes(ctx, m.Addr)
	if err != nil {
		return t, fmt.Errorf("server.%d: %w", m.ID, err)
	}
	return t, nil
}

// Fill overwrites n existing nodes with pipelined setData requests and
// returns how many were issued.
func (p liveSnapProbe) fill(ctx context.Context, n int64) (int64, error) {
	tr := p.tr
	if tr.keys == nil || tr.keys.Total() == 0 {
		return 0, errors.New("bench: no nodes to overwrite (the tree was not grown)")
	}
	res, err := load.RunPhase(ctx, load.PhaseConfig{
		Target: tr.target.Name, Phase: "snapshot-fill", Addrs: tr.ens.ClientOrder(tr.leader),
		Workload: load.WorkloadSet, Conns: snapFillConns, Inflight: snapFillInflight, ValueSize: tr.cfg.ValueSize,
		Duration: snapFillTimeout, MaxOps: n, Keys: tr.keys, SessionTimeout: tr.cfg.SessionTimeout,
	})
	return res.Ops + res.Errors, err
}
