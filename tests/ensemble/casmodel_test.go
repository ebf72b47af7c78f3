package ensemble

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/anishathalye/porcupine"
)

// The CAS test's sequential specification: each znode is a versioned
// register, (value, version), starting at ("0", 0) as created. ZooKeeper's
// setData with version -1 always writes and bumps the version; with an
// expected version it writes only if the version matches (else
// BadVersion); getData returns both.

type casKind int

const (
	casRead casKind = iota // sync, then getData
	casSet                 // setData(value, -1)
	casCAS                 // setData(value, expect)
)

type casInput struct {
	kind   casKind
	key    int
	value  int64 // written by casSet/casCAS
	expect int32 // casCAS: the expected version
}

type casOutput struct {
	// unknown: a write cut off by a connection error; it may or may not
	// have happened. Its Return is set to infinity, so porcupine may
	// linearize it anywhere after its call, including after every other
	// operation, which is the same as never.
	unknown bool
	ok      bool  // casSet/casCAS: written; casCAS false: BadVersion
	value   int64 // casRead
	version int32 // casRead: the version read; a write that is ok: the new version
}

type register struct {
	value   int64
	version int32
}

// unknownReturn is the Return of an ambiguous operation.
const unknownReturn = math.MaxInt64

func casStep(state, input, output any) (bool, any) {
	st := state.(register)
	in := input.(casInput)
	out := output.(casOutput)
	next := register{value: in.value, version: st.version + 1}
	switch in.kind {
	case casRead:
		return out.value == st.value && out.version == st.version, st
	case casSet:
		if out.unknown {
			return true, next
		}
		return out.ok && out.version == next.version, next
	case casCAS:
		match := st.version == in.expect
		switch {
		case out.unknown && match:
			return true, next
		case out.unknown:
			return true, st
		case out.ok:
			return match && out.version == next.version, next
		default:
			return !match, st
		}
	}
	return false, st
}

// casModel partitions by znode: registers are independent, so the history
// is linearizable iff each register's is (P-compositionality).
func casModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[int][]porcupine.Operation{}
			for _, op := range history {
				k := op.Input.(casInput).key
				byKey[k] = append(byKey[k], op)
			}
			keys := make([]int, 0, len(byKey))
			for k := range byKey {
				keys = append(keys, k)
			}
			sort.Ints(keys)
			out := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		},
		Init: func() any { return register{value: 0, version: 0} },
		Step: casStep,
		Hash: func(state any) uint64 {
			st := state.(register)
			return uint64(st.value)*1_000_003 ^ uint64(st.version)
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(casInput), output.(casOutput)
			res := "?"
			switch {
			case out.unknown:
				res = "unknown"
			case in.kind == casRead:
				res = fmt.Sprintf("%d@v%d", out.value, out.version)
			case out.ok:
				res = fmt.Sprintf("ok v%d", out.version)
			default:
				res = "BadVersion"
			}
			switch in.kind {
			case casRead:
				return fmt.Sprintf("r%d read -> %s", in.key, res)
			case casSet:
				return fmt.Sprintf("r%d set(%d) -> %s", in.key, in.value, res)
			default:
				return fmt.Sprintf("r%d cas(v%d, %d) -> %s", in.key, in.expect, in.value, res)
			}
		},
		DescribeState: func(state any) string {
			st := state.(register)
			return fmt.Sprintf("%d@v%d", st.value, st.version)
		},
	}
}

// TestCASModel shows the checker and the model can fail: each history is
// small enough to reason about by hand.
func TestCASModel(t *testing.T) {
	t.Parallel()
	op := func(client int, in casInput, call, ret int64, out casOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	read := func(key int) casInput { return casInput{kind: casRead, key: key} }
	set := func(key int, v int64) casInput { return casInput{kind: casSet, key: key, value: v} }
	cas := func(key int, expect int32, v int64) casInput {
		return casInput{kind: casCAS, key: key, expect: expect, value: v}
	}
	got := func(v int64, ver int32) casOutput { return casOutput{value: v, version: ver} }
	ok := func(ver int32) casOutput { return casOutput{ok: true, version: ver} }
	badVersion := casOutput{}
	unknown := casOutput{unknown: true}

	cases := []struct {
		name    string
		history []porcupine.Operation
		want    bool
	}{
		{"stale read after an acknowledged write", []porcupine.Operation{
			op(0, set(0, 7), 0, 10, ok(1)),
			op(1, read(0), 20, 30, got(0, 0)),
		}, false},
		{"concurrent read may see either", []porcupine.Operation{
			op(0, set(0, 7), 0, 10, ok(1)),
			op(1, read(0), 5, 30, got(0, 0)),
			op(2, read(0), 6, 31, got(7, 1)),
		}, true},
		{"lost update: two CAS from the same version both succeed", []porcupine.Operation{
			op(0, cas(0, 0, 1), 0, 10, ok(1)),
			op(1, cas(0, 0, 2), 0, 10, ok(1)),
		}, false},
		{"one of two concurrent CAS fails", []porcupine.Operation{
			op(0, cas(0, 0, 1), 0, 10, ok(1)),
			op(1, cas(0, 0, 2), 0, 10, badVersion),
			op(2, read(0), 20, 30, got(1, 1)),
		}, true},
		{"CAS refused although the version matched", []porcupine.Operation{
			op(0, cas(0, 0, 1), 0, 10, badVersion),
		}, false},
		{"read of a value nobody wrote", []porcupine.Operation{
			op(0, set(0, 5), 0, 10, ok(1)),
			op(1, read(0), 20, 30, got(6, 1)),
		}, false},
		{"ambiguous write that never happened", []porcupine.Operation{
			op(0, set(0, 5), 0, unknownReturn, unknown),
			op(1, read(0), 20, 30, got(0, 0)),
			op(1, read(0), 40, 50, got(0, 0)),
		}, true},
		{"ambiguous write that happened later", []porcupine.Operation{
			op(0, set(0, 5), 0, unknownReturn, unknown),
			op(1, read(0), 20, 30, got(0, 0)),
			op(1, read(0), 40, 50, got(5, 1)),
		}, true},
		{"ambiguous write seen and then unseen", []porcupine.Operation{
			op(0, set(0, 5), 0, unknownReturn, unknown),
			op(1, read(0), 20, 30, got(5, 1)),
			op(1, read(0), 40, 50, got(0, 0)),
		}, false},
		{"ambiguous CAS cannot apply from a stale version", []porcupine.Operation{
			op(0, set(0, 3), 0, 10, ok(1)),
			op(1, cas(0, 0, 5), 20, unknownReturn, unknown),
			op(2, read(0), 30, 40, got(5, 2)),
		}, false},
		{"registers are independent", []porcupine.Operation{
			op(0, set(0, 3), 0, 10, ok(1)),
			op(1, read(1), 20, 30, got(0, 0)),
			op(1, read(0), 20, 30, got(3, 1)),
		}, true},
		{"second register stale", []porcupine.Operation{
			op(0, set(1, 3), 0, 10, ok(1)),
			op(1, read(0), 20, 30, got(0, 0)),
			op(1, read(1), 20, 30, got(0, 0)),
		}, false},
	}
	for _, c := range cases {
		res, _ := porcupine.CheckOperationsVerbose(casModel(), c.history, 0)
		want := porcupine.Illegal
		if c.want {
			want = porcupine.Ok
		}
		if res != want {
			t.Errorf("%s: porcupine says %s, want %s", c.name, res, want)
		}
	}
}
