package ycsb

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// YCSB on ZooKeeper: how `corral bench ycsb` maps the Yahoo! Cloud Serving
// Benchmark's core workloads onto znodes.
//
// Records. YCSB's table "usertable" is the znode /ycsb/<table>; each
// record is one child znode named as YCSB names keys with its default
// insertorder=hashed: "user" followed by the decimal fnvhash64 of the
// record's number (user6284781860667377211). Its value is the record's ten
// fields (fieldcount=10) of 100 bytes each (fieldlength=100) concatenated
// in field order, 1000 bytes with no separators or names: field i is bytes
// [100·i, 100·(i+1)) (see ycsbField). The content is random printable
// ASCII, as YCSB's RandomByteIterator makes.
//
// Operations:
//
//   - read: getData of the record (all fields: YCSB's readallfields=true).
//   - update: setData of the record with version -1. ZooKeeper has no
//     partial write, so the whole 1000-byte value is written; as YCSB's
//     default (writeallfields=false) one field gets new content, the other
//     nine are what this client last wrote, since it does not read first.
//   - insert: create of the next record (persistent, OPEN_ACL_UNSAFE).
//     Keys come from the shared insert sequence, which starts at
//     recordcount and which reads never pass until the insert has
//     finished (YCSB's acknowledged counter).
//   - read-modify-write (F): getData, then setData of the value read with
//     one field changed and the version the getData returned. Another
//     thread's write in between makes the setData fail with BadVersion;
//     that is counted as a conflict, its own outcome, and the run goes on.
//     Latency is of the pair, as YCSB's READ-MODIFY-WRITE measurement.
//   - scan (E): ZooKeeper has no range scan (getChildren lists names,
//     unordered, and reads no data), so a scan of length L reads the L
//     consecutive record numbers from the start key with getData, stopping
//     at the newest acknowledged insert. The L requests are pipelined on
//     the session (written together, answered in order) and the scan's
//     latency runs to the last reply; records missing (NoNode: a failed
//     insert) are skipped, as a store returns fewer records. YCSB's scan
//     is in key order, which for hashed keys is not record-number order;
//     a number range is what a znode-per-record layout can address.
//
// The workloads are YCSB's workload files' proportions: A 50% read 50%
// update, B 95/5 read/update, C 100% read, D 95% read 5% insert with the
// latest distribution, E 95% scan 5% insert (scan length uniform in
// [1, maxscanlength=100]), F 50% read 50% read-modify-write, all but D
// zipfian; and S, the ZooKeeper study's (../shared/papers/004_*) 95% read
// 5% update. The study names no distribution for S; it gets CoreWorkload's
// default, uniform, which is also what tells it apart from B.
//
// Distributions, as CoreWorkload builds its key chooser: uniform over the
// recordcount loaded keys; zipfian, YCSB's scrambled zipfian (theta 0.99,
// popular keys scattered by hashing) over recordcount keys plus room for
// the inserts expected, 2 × insertproportion × operationcount, with
// operationcount taken as recordcount (the run is bounded by time, and
// YCSB's workload files set the two equal); latest, zipfian over recency
// from the newest acknowledged insert. A key drawn beyond the newest
// acknowledged insert is drawn again, as YCSB does.

// YCSBWorkload is one workload's operation mix and default request
// distribution.
type YCSBWorkload struct {
	Name string `json:"name"`
	// The operation proportions; they sum to 1.
	Read   float64 `json:"read"`
	Update float64 `json:"update"`
	Insert float64 `json:"insert"`
	Scan   float64 `json:"scan"`
	RMW    float64 `json:"rmw"`
	// Distribution is the request distribution (ycsbUniform, ycsbZipfian or
	// ycsbLatest).
	Distribution string `json:"distribution"`
	// MaxScanLength bounds a scan's length, drawn uniformly from
	// [1, MaxScanLength].
	MaxScanLength int `json:"max_scan_length,omitempty"`
}

// Request distributions.
const (
	ycsbUniform = "uniform"
	ycsbZipfian = "zipfian"
	ycsbLatest  = "latest"
)

// Defaults of `corral bench ycsb`.
const (
	// DefaultYCSBMaxScanLength is YCSB's maxscanlength of workload E.
	DefaultYCSBMaxScanLength = 100
	MaxYCSBScanLength        = 10000
)

// YCSBWorkloads are the core workloads A to F and the study's S, in name
// order.
func YCSBWorkloads() []YCSBWorkload {
	return []YCSBWorkload{
		{Name: "A", Read: 0.5, Update: 0.5, Distribution: ycsbZipfian},
		{Name: "B", Read: 0.95, Update: 0.05, Distribution: ycsbZipfian},
		{Name: "C", Read: 1, Distribution: ycsbZipfian},
		{Name: "D", Read: 0.95, Insert: 0.05, Distribution: ycsbLatest},
		{Name: "E", Scan: 0.95, Insert: 0.05, Distribution: ycsbZipfian, MaxScanLength: DefaultYCSBMaxScanLength},
		{Name: "F", Read: 0.5, RMW: 0.5, Distribution: ycsbZipfian},
		{Name: "S", Read: 0.95, Update: 0.05, Distribution: ycsbUniform},
	}
}

// ParseYCSBWorkloads reads a comma-separated list of workload names (case
// insensitive); they run in the order given. distribution, if not empty,
// replaces every workload's default; maxScan, if positive, replaces the
// scan length bound.
func ParseYCSBWorkloads(names, distribution string, maxScan int) ([]YCSBWorkload, error) {
	switch distribution {
	case "", ycsbUniform, ycsbZipfian, ycsbLatest:
	default:
		return nil, fmt.Errorf("bench: unknown request distribution %q (want %s, %s or %s)", distribution, ycsbUniform, ycsbZipfian, ycsbLatest)
	}
	if maxScan > MaxYCSBScanLength {
		return nil, fmt.Errorf("bench: scan length bound %d above %d", maxScan, MaxYCSBScanLength)
	}
	all := YCSBWorkloads()
	var out []YCSBWorkload
	for _, n := range strings.Split(names, ",") {
		n = strings.ToUpper(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		i := slices.IndexFunc(all, func(w YCSBWorkload) bool { return w.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("bench: unknown YCSB workload %q (want some of A,B,C,D,E,F,S)", n)
		}
		w := all[i]
		if distribution != "" {
			w.Distribution = distribution
		}
		if maxScan > 0 && w.Scan > 0 {
			w.MaxScanLength = maxScan
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no YCSB workload named (want some of A,B,C,D,E,F,S)")
	}
	return out, nil
}

// Mix describes the proportions ("read 0.95 update 0.05").
func (w YCSBWorkload) Mix() string {
	var parts []string
	for k, p := range w.proportions() {
		if p > 0 {
			parts = append(parts, fmt.Sprintf("%s %g", ycsbOpKind(k), p))
		}
	}
	if w.Scan > 0 {
		parts = append(parts, fmt.Sprintf("(scan length uniform 1..%d)", w.MaxScanLength))
	}
	return strings.Join(parts, " ")
}

func (w YCSBWorkload) proportions() [ycsbOpKinds]float64 {
	return [ycsbOpKinds]float64{opRead: w.Read, opUpdate: w.Update, opInsert: w.Insert, opScan: w.Scan, opRMW: w.RMW}
}

// ycsbOpKind is a YCSB operation.
type ycsbOpKind int

const (
	opRead ycsbOpKind = iota
	opUpdate
	opInsert
	opScan
	opRMW
	ycsbOpKinds
)

var ycsbOpNames = [ycsbOpKinds]string{"read", "update", "insert", "scan", "rmw"}

func (k ycsbOpKind) String() string {
	if k < 0 || k >= ycsbOpKinds {
		return "op" + strconv.Itoa(int(k))
	}
	return ycsbOpNames[k]
}

// The record layout: ten fields of 100 bytes, concatenated.
const (
	ycsbFieldCount  = 10
	ycsbFieldLength = 100
	ycsbRecordSize  = ycsbFieldCount * ycsbFieldLength
)

// ycsbField is field i of a record value.
func ycsbField(rec []byte, i int) []byte {
	return rec[i*ycsbFieldLength : (i+1)*ycsbFieldLength]
}

// ycsbBytes fills records with random printable ASCII, cheaply: one
// xorshift step gives eight bytes. Each thread has its own.
type ycsbBytes struct{ x uint64 }

func newYCSBBytes(seed uint64) *ycsbBytes { return &ycsbBytes{x: seed | 1} }

func (g *ycsbBytes) fill(b []byte) {
	for i := 0; i < len(b); i += 8 {
		g.x ^= g.x << 13
		g.x ^= g.x >> 7
		g.x ^= g.x << 17
		v := g.x
		for j := i; j < min(i+8, len(b)); j++ {
			// ' ' .. '_': 64 printable characters.
			b[j] = ' ' + byte(v&63)
			v >>= 8
		}
	}
}

// newRecord returns a full record with every field filled.
func (g *ycsbBytes) newRecord() []byte {
	rec := make([]byte, ycsbRecordSize)
	g.fill(rec)
	return rec
}

// appendYCSBKey appends record k's znode path: table/user<fnvhash64(k)>.
func appendYCSBKey(dst []byte, table string, k int64) []byte {
	dst = append(dst, table...)
	dst = append(dst, "/user"...)
	return strconv.AppendInt(dst, fnvhash64(k), 10)
}

// ycsbOp is one operation a thread is to do: on record Key, or on the
// ScanLen records from Key for a scan.
type ycsbOp struct {
	Kind    ycsbOpKind
	Key     int64
	ScanLen int
}

// keyChooser draws a record number.
type keyChooser interface {
	next(r *rand.Rand) int64
}

// ycsbChooser is one thread's operation generator: which operation next,
// on which record. Threads share only the insert sequence.
type ycsbChooser struct {
	r       *rand.Rand
	ops     discrete
	kinds   []ycsbOpKind
	keys    keyChooser
	inserts *ackCounter
	scanLen uniformInt
}

// newYCSBChooser builds a thread's chooser for w over recordCount loaded
// Records; inserts is the target's shared insert sequence.
func newYCSBChooser(w YCSBWorkload, recordCount int64, inserts *ackCounter, r *rand.Rand) *ycsbChooser {
	c := &ycsbChooser{r: r, inserts: inserts, scanLen: newUniformInt(1, int64(max(w.MaxScanLength, 1)))}
	for k, p := range w.proportions() {
		if p > 0 {
			c.ops.add(p)
			c.kinds = append(c.kinds, ycsbOpKind(k))
		}
	}
	switch w.Distribution {
	case ycsbLatest:
		c.keys = newSkewedLatest(inserts)
	case ycsbZipfian:
		expected := int64(2 * w.Insert * float64(recordCount))
		c.keys = newScrambledZipfian(0, recordCount+expected-1)
	default:
		c.keys = newUniformInt(0, recordCount-1)
	}
	return c
}

// maxKeyRedraws bounds the redrawing of keys beyond the newest
// acknowledged insert; past it a key is drawn uniformly from those that
// exist. With the key space sized as YCSB sizes it, a redraw is rare.
const maxKeyRedraws = 1000

// nextKey draws a record number no greater than the newest acknowledged
// insert (YCSB's CoreWorkload.nextKeynum).
func (c *ycsbChooser) nextKey() int64 {
	last := c.inserts.last()
	for range maxKeyRedraws {
		if k := c.keys.next(c.r); k <= last {
			return k
		}
	}
	return c.r.Int64N(max(last+1, 1))
}

// next draws the next operation. An insert takes its key from the shared
// sequence; the caller must ack it when the insert is done.
func (c *ycsbChooser) next() ycsbOp {
	if len(c.kinds) == 0 {
		return ycsbOp{Kind: opRead, Key: c.nextKey()}
	}
	kind := c.kinds[c.ops.next(c.r)]
	switch kind {
	case opInsert:
		return ycsbOp{Kind: opInsert, Key: c.inserts.take()}
	case opScan:
		return ycsbOp{Kind: opScan, Key: c.nextKey(), ScanLen: int(c.scanLen.next(c.r))}
	}
	return ycsbOp{Kind: kind, Key: c.nextKey()}
}
