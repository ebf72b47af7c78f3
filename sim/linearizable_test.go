package sim

import (
	"testing"

	"github.com/corral-db/corral/internal/linmodel"
)

// TestRegOpEncoding: what the workload proposes is what the state
// machine applies.
func TestRegOpEncoding(t *testing.T) {
	for _, op := range []linmodel.Op{
		{Kind: linmodel.Read, Key: 0},
		{Kind: linmodel.Set, Key: 2, Value: 1 << 40},
		{Kind: linmodel.CAS, Key: 1, Value: 300, Expect: 70000},
	} {
		got, ok := decodeRegOp(encodeRegOp(op))
		if !ok || got != op {
			t.Errorf("%+v decoded as %+v (%v)", op, got, ok)
		}
	}
	for _, data := range [][]byte{nil, []byte("w1.2"), []byte("final.7"), {'R', 1, regKeys, 1, 1}, {'R', 1, 0, 0x80}} {
		if op, ok := decodeRegOp(data); ok {
			t.Errorf("%q decoded as %+v", data, op)
		}
	}
	var m machine
	m.regs[1] = linmodel.Register{Value: 5, Version: 9}
	m.zxid, m.digest = 77, 88
	if got, ok := decodeMachine(m.encode()); !ok || got != m {
		t.Errorf("machine %+v round-trips as %+v", m, got)
	}
}
