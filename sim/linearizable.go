package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// regOutput is what a client observed: a result, or nothing (unknown: a
// write whose server crashed or which timed out).
type regOutput struct {
	regResult
	unknown bool
}

// regStep is the sequential specification of one register, the same as
// tests/ensemble's CAS model: set always writes and bumps the version, CAS
// writes only at the expected version, a read returns value and version.
// An unknown write may have happened or not.
func regStep(state, input, output any) (bool, any) {
	st, op, out := state.(register), input.(regOp), output.(regOutput)
	next := st
	res := next.apply(op)
	if out.unknown {
		// Applying it or not are both allowed; porcupine explores the
		// "not" by linearizing it after everything else, where its effect
		// is invisible. A failed CAS leaves st as it was.
		return true, next
	}
	return res == out.regResult, next
}

// regModel checks one register's history (check partitions by key).
var regModel = porcupine.Model{
	Init:  func() any { return register{} },
	Step:  regStep,
	Equal: func(a, b any) bool { return a.(register) == b.(register) },
	Hash: func(state any) uint64 {
		st := state.(register)
		return uint64(st.value)*1_000_003 ^ uint64(st.version)
	},
	DescribeOperation: func(input, output any) string {
		op, out := input.(regOp), output.(regOutput)
		res := fmt.Sprintf("%d@v%d", out.value, out.version)
		switch {
		case out.unknown:
			res = "unknown"
		case op.kind == regSet || op.kind == regCAS:
			res = fmt.Sprintf("ok=%v v%d", out.ok, out.version)
		}
		switch op.kind {
		case regRead:
			return fmt.Sprintf("r%d read -> %s", op.key, res)
		case regConfirmedRead:
			return fmt.Sprintf("r%d confirmed read -> %s", op.key, res)
		case regSet:
			return fmt.Sprintf("r%d set(%d) -> %s", op.key, op.value, res)
		}
		return fmt.Sprintf("r%d cas(v%d, %d) -> %s", op.key, op.expect, op.value, res)
	},
}

// linTimeout bounds porcupine's search per register. Histories are a few
// hundred operations with unique values, which porcupine checks in
// milliseconds; a search that runs out is reported as unchecked, not as
// a failure, since it depends on the machine's speed and a seed must
// replay the same.
const linTimeout = time.Minute

// checkLinearizable checks each register's history separately (the
// registers are independent, so the whole is linearizable iff each is).
// It returns an error naming the first register whose history is not,
// with that history, and whether every register could be checked.
func checkLinearizable(history []porcupine.Operation) (checked bool, err error) {
	checked = true
	for key := range regKeys {
		var ops []porcupine.Operation
		for _, op := range history {
			if op.Input.(regOp).key == key {
				ops = append(ops, op)
			}
		}
		switch porcupine.CheckOperationsTimeout(regModel, ops, linTimeout) {
		case porcupine.Illegal:
			return checked, fmt.Errorf("register %d: history of %d operations not linearizable:\n%s", key, len(ops), describeHistory(ops))
		case porcupine.Unknown:
			checked = false
		}
	}
	return checked, nil
}

// describeHistory lists the operations around the first one porcupine
// could not linearize (the earliest call left out of its longest partial
// linearization): 40 before it and 40 from it, by call time.
func describeHistory(ops []porcupine.Operation) string {
	ops = slices.Clone(ops)
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	at := 0
	if _, info := porcupine.CheckOperationsVerbose(regModel, ops, linTimeout); true {
		var longest []porcupine.Operation
		for _, part := range info.PartialLinearizationsOperations() {
			for _, lin := range part {
				if len(lin) > len(longest) {
					longest = lin
				}
			}
		}
		in := map[[2]int64]bool{}
		for _, op := range longest {
			in[[2]int64{op.Call, int64(op.ClientId)}] = true
		}
		for i, op := range ops {
			if !in[[2]int64{op.Call, int64(op.ClientId)}] {
				at = i
				break
			}
		}
	}
	var b strings.Builder
	for i := max(0, at-40); i < min(len(ops), at+40); i++ {
		op := ops[i]
		ret := fmt.Sprint(op.Return)
		if op.Return == unknownReturn {
			ret = "-"
		}
		mark := "  "
		if i == at {
			mark = "=>"
		}
		fmt.Fprintf(&b, "  %s [%d, %s] client %d: %s\n", mark, op.Call, ret, op.ClientId, regModel.DescribeOperation(op.Input, op.Output))
	}
	return b.String()
}
