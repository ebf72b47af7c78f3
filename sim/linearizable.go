package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/corral-db/corral/internal/linmodel"
)

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
			if op.Input.(linmodel.Op).Key == key {
				ops = append(ops, op)
			}
		}
		switch porcupine.CheckOperationsTimeout(linmodel.Model, ops, linTimeout) {
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
	if _, info := porcupine.CheckOperationsVerbose(linmodel.Model, ops, linTimeout); true {
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
		if op.Return == linmodel.UnknownReturn {
			ret = "-"
		}
		mark := "  "
		if i == at {
			mark = "=>"
		}
		fmt.Fprintf(&b, "  %s [%d, %s] client %d: %s\n", mark, op.Call, ret, op.ClientId, linmodel.Model.DescribeOperation(op.Input, op.Output))
	}
	return b.String()
}
