package linmodel

import (
	"fmt"
	"math"

	"github.com/anishathalye/porcupine"
)

// Register is a versioned register: one znode's data and version. Every
// write bumps the version; a CAS writes only at an expected version.
type Register struct {
	Value   int64
	Version int32
}

// Kind is what an operation does.
type Kind uint8

const (
	Read Kind = iota // read value and version
	Set              // write the value, whatever the version (setData -1)
	CAS              // write the value if the version is Expect
	// ConfirmedRead is a read answered from the leader's own state after
	// it confirmed its leadership; the model treats it as Read.
	ConfirmedRead
)

// Op is one operation on register Key: a porcupine Input.
type Op struct {
	Kind   Kind
	Key    int
	Value  int64 // Set, CAS: the value written
	Expect int32 // CAS: the expected version
}

// Result is what an operation returns to its client.
type Result struct {
	OK      bool  // reads, and Set and CAS that wrote: true
	Value   int64 // reads: the value
	Version int32 // reads: the version; a write that is OK: the new version
}

// Output is what a client observed: a Result, or nothing (Unknown: a
// write whose connection or server failed before the answer; it may or
// may not have happened). A porcupine Output.
type Output struct {
	Result
	Unknown bool
}

// UnknownReturn is the Return of an operation whose outcome is unknown:
// porcupine may linearize it anywhere after its call, including after
// every other operation, which is the same as never.
const UnknownReturn = math.MaxInt64

// Apply applies op to r and returns what its client gets.
func (r *Register) Apply(op Op) Result {
	switch op.Kind {
	case Set:
		r.Value, r.Version = op.Value, r.Version+1
		return Result{OK: true, Version: r.Version}
	case CAS:
		if r.Version != op.Expect {
			return Result{}
		}
		r.Value, r.Version = op.Value, r.Version+1
		return Result{OK: true, Version: r.Version}
	}
	return Result{OK: true, Value: r.Value, Version: r.Version}
}

// step is the model's transition: an observed result must be what
// applying the operation returns; an unknown one may have happened or
// not (porcupine explores "not" by linearizing it after everything
// else, where its effect is invisible; a refused CAS changes nothing).
func step(state, input, output any) (bool, any) {
	next, op, out := state.(Register), input.(Op), output.(Output)
	res := next.Apply(op)
	if out.Unknown {
		return true, next
	}
	return res == out.Result, next
}

// Model is the porcupine model of the registers, partitioned by key: they
// are independent, so a history is linearizable iff each register's is.
var Model = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		var keys []int
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(Op).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init:  func() any { return Register{} },
	Step:  step,
	Equal: func(a, b any) bool { return a.(Register) == b.(Register) },
	Hash: func(state any) uint64 {
		st := state.(Register)
		return uint64(st.Value)*1_000_003 ^ uint64(st.Version)
	},
	DescribeOperation: func(input, output any) string {
		op, out := input.(Op), output.(Output)
		res := fmt.Sprintf("%d@v%d", out.Value, out.Version)
		switch {
		case out.Unknown:
			res = "unknown"
		case op.Kind == Set || op.Kind == CAS:
			res = fmt.Sprintf("ok=%v v%d", out.OK, out.Version)
		}
		switch op.Kind {
		case Read:
			return fmt.Sprintf("r%d read -> %s", op.Key, res)
		case ConfirmedRead:
			return fmt.Sprintf("r%d confirmed read -> %s", op.Key, res)
		case Set:
			return fmt.Sprintf("r%d set(%d) -> %s", op.Key, op.Value, res)
		}
		return fmt.Sprintf("r%d cas(v%d, %d) -> %s", op.Key, op.Expect, op.Value, res)
	},
	DescribeState: func(state any) string {
		st := state.(Register)
		return fmt.Sprintf("%d@v%d", st.Value, st.Version)
	},
}
