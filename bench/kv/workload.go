package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	kvpb "github.com/corral-db/corral/api/kv/v1"
)

// The paper's record: 10 columns of 100 bytes in one family. corral
// stores a record as one row with the columns field0..field9 of family
// "f"; etcd as one key holding the ten values end to end (1000 bytes),
// since it has no columns. Both write and read whole records, so a write
// carries the same payload to both stores.
const (
	Fields    = 10
	FieldSize = 100
	// Family is the column family the records are stored in.
	Family = "f"
	// Table is corral's table and etcd's key prefix.
	Table = "usertable"
)

// OpKind is one kind of operation a workload issues.
type OpKind int

const (
	// OpRead reads a whole record.
	OpRead OpKind = iota
	// OpUpdate overwrites a whole record.
	OpUpdate
	// OpRMW reads a record and then overwrites it (YCSB's
	// read-modify-write; its latency covers both).
	OpRMW
	// OpInsert writes a new record, the next of the shared insert
	// sequence.
	OpInsert
	// OpScan reads up to a uniform 1..MaxScanLength records in key order
	// from a chosen one.
	OpScan
	opKinds
)

// MaxScanLength is YCSB's default maxscanlength.
const MaxScanLength = 100

var opNames = [opKinds]string{"read", "update", "rmw", "insert", "scan"}

func (k OpKind) String() string {
	if k < 0 || k >= opKinds {
		return "op" + strconv.Itoa(int(k))
	}
	return opNames[k]
}

// Workload is a mix of operations over zipfian keys.
type Workload struct {
	// Name is A, B, C, F (YCSB's core workloads) or W (100% writes, the
	// paper's Figs. 8-12 load).
	Name string
	// Mix is each kind's share; the shares sum to 1.
	Mix [opKinds]float64
	// Latest draws keys from YCSB's "latest" distribution (D) instead of
	// the scrambled zipfian.
	Latest bool
}

// Workloads are the workloads this experiment knows, in the default
// order.
func Workloads() []Workload {
	return []Workload{
		{Name: "A", Mix: [opKinds]float64{OpRead: 0.5, OpUpdate: 0.5}},
		{Name: "B", Mix: [opKinds]float64{OpRead: 0.95, OpUpdate: 0.05}},
		{Name: "C", Mix: [opKinds]float64{OpRead: 1}},
		{Name: "D", Mix: [opKinds]float64{OpRead: 0.95, OpInsert: 0.05}, Latest: true},
		{Name: "E", Mix: [opKinds]float64{OpScan: 0.95, OpInsert: 0.05}},
		{Name: "F", Mix: [opKinds]float64{OpRead: 0.5, OpRMW: 0.5}},
		{Name: "W", Mix: [opKinds]float64{OpUpdate: 1}},
	}
}

// DefaultWorkloads is the default -workload list: issue 23's comparison
// with etcd (D and E, which insert, are there to be named).
const DefaultWorkloads = "A,B,C,F,W"

// ParseWorkloads parses a comma-separated list of workload names.
func ParseWorkloads(s string) ([]Workload, error) {
	known := Workloads()
	var out []Workload
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		if seen[name] {
			return nil, fmt.Errorf("workload %s named twice", name)
		}
		seen[name] = true
		found := false
		for _, w := range known {
			if w.Name == name {
				out = append(out, w)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown workload %q (want some of A,B,C,D,E,F,W)", name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no workload named")
	}
	return out, nil
}

// Describe is the mix in words, e.g. "50% read, 50% update".
func (w Workload) Describe() string {
	var parts []string
	for k := range opKinds {
		if w.Mix[k] > 0 {
			parts = append(parts, strconv.FormatFloat(w.Mix[k]*100, 'f', -1, 64)+"% "+k.String())
		}
	}
	d := strings.Join(parts, ", ")
	if w.Latest {
		d += ", latest keys"
	}
	return d
}

// Choose maps a uniform draw u in [0, 1) to the operation kind whose
// cumulative share first exceeds it.
func (w Workload) Choose(u float64) OpKind {
	var acc float64
	last := OpRead
	for k := range opKinds {
		if w.Mix[k] == 0 {
			continue
		}
		acc += w.Mix[k]
		last = k
		if u < acc {
			return k
		}
	}
	return last // rounding: u within a hair of 1
}

// NewRecord draws a record's ten field values from r.
func NewRecord(r *rand.Rand) [][]byte {
	rec := make([][]byte, Fields)
	for i := range rec {
		f := make([]byte, FieldSize)
		for j := range f {
			f[j] = byte('a' + r.IntN(26))
		}
		rec[i] = f
	}
	return rec
}

// Qualifier is field i's column qualifier.
func Qualifier(i int) []byte { return []byte("field" + strconv.Itoa(i)) }

// CorralPut is the put that writes rec as row key.
func CorralPut(key string, rec [][]byte) *kvpb.PutRequest {
	cells := make([]*kvpb.Cell, len(rec))
	for i, v := range rec {
		cells[i] = &kvpb.Cell{Family: Family, Qualifier: Qualifier(i), Value: v}
	}
	return &kvpb.PutRequest{Table: Table, Row: []byte(key), Cells: cells}
}

// EtcdRangeEnd is the end (exclusive) of every record key in etcd.
const EtcdRangeEnd = Table + "0" // '0' follows '/'

// EtcdKey is etcd's key of record key.
func EtcdKey(key string) string { return Table + "/" + key }

// EtcdValue is etcd's value of rec: the fields end to end.
func EtcdValue(rec [][]byte) []byte {
	n := 0
	for _, f := range rec {
		n += len(f)
	}
	v := make([]byte, 0, n)
	for _, f := range rec {
		v = append(v, f...)
	}
	return v
}
