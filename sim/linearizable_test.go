package sim

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestRegModel shows the register model and the check can fail, on
// histories small enough to reason about by hand.
func TestRegModel(t *testing.T) {
	op := func(client int, in regOp, call, ret int64, out regOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	read := func(key int) regOp { return regOp{kind: regRead, key: key} }
	cread := func(key int) regOp { return regOp{kind: regConfirmedRead, key: key} }
	set := func(key int, v int64) regOp { return regOp{kind: regSet, key: key, value: v} }
	cas := func(key int, expect int32, v int64) regOp {
		return regOp{kind: regCAS, key: key, expect: expect, value: v}
	}
	got := func(v int64, ver int32) regOutput {
		return regOutput{regResult: regResult{ok: true, value: v, version: ver}}
	}
	ok := func(ver int32) regOutput { return regOutput{regResult: regResult{ok: true, version: ver}} }
	refused := regOutput{}
	unknown := regOutput{unknown: true}

	cases := []struct {
		name    string
		history []porcupine.Operation
		want    bool
	}{
		{"stale read after an acknowledged write", []porcupine.Operation{
			op(0, set(0, 7), 0, 10, ok(1)),
			op(1, read(0), 20, 30, got(0, 0)),
		}, false},
		{"stale confirmed read", []porcupine.Operation{
			op(0, set(0, 7), 0, 10, ok(1)),
			op(1, cread(0), 20, 30, got(0, 0)),
		}, false},
		{"concurrent reads may see either", []porcupine.Operation{
			op(0, set(0, 7), 0, 10, ok(1)),
			op(1, read(0), 5, 30, got(0, 0)),
			op(2, cread(0), 6, 31, got(7, 1)),
		}, true},
		{"two CAS from the same version both succeed", []porcupine.Operation{
			op(0, cas(0, 0, 1), 0, 10, ok(1)),
			op(1, cas(0, 0, 2), 0, 10, ok(1)),
		}, false},
		{"one of two concurrent CAS refused", []porcupine.Operation{
			op(0, cas(0, 0, 1), 0, 10, ok(1)),
			op(1, cas(0, 0, 2), 0, 10, refused),
			op(2, read(0), 20, 30, got(1, 1)),
		}, true},
		{"CAS refused although the version matched", []porcupine.Operation{
			op(0, cas(0, 0, 1), 0, 10, refused),
		}, false},
		{"unknown write that never happened", []porcupine.Operation{
			op(0, set(0, 5), 0, unknownReturn, unknown),
			op(1, read(0), 20, 30, got(0, 0)),
			op(1, read(0), 40, 50, got(0, 0)),
		}, true},
		{"unknown write that happened later", []porcupine.Operation{
			op(0, set(0, 5), 0, unknownReturn, unknown),
			op(1, read(0), 20, 30, got(0, 0)),
			op(1, read(0), 40, 50, got(5, 1)),
		}, true},
		{"unknown write seen, then unseen", []porcupine.Operation{
			op(0, set(0, 5), 0, unknownReturn, unknown),
			op(1, read(0), 20, 30, got(5, 1)),
			op(1, read(0), 40, 50, got(0, 0)),
		}, false},
		{"unknown CAS cannot apply at a stale version", []porcupine.Operation{
			op(0, set(0, 3), 0, 10, ok(1)),
			op(1, cas(0, 0, 5), 20, unknownReturn, unknown),
			op(2, read(0), 30, 40, got(5, 2)),
		}, false},
	}
	for _, c := range cases {
		_, err := checkLinearizable(c.history)
		if (err == nil) != c.want {
			t.Errorf("%s: linearizable=%v, want %v (%v)", c.name, err == nil, c.want, err)
		}
	}
	// Registers are independent: a stale read of one is caught among
	// operations on the others.
	_, err := checkLinearizable([]porcupine.Operation{
		op(0, set(1, 3), 0, 10, ok(1)),
		op(1, read(0), 20, 30, got(0, 0)),
		op(1, read(1), 20, 30, got(0, 0)),
	})
	if err == nil {
		t.Error("stale read of register 1 not caught")
	}
}

// TestRegOpEncoding: what the workload proposes is what the state
// machine applies.
func TestRegOpEncoding(t *testing.T) {
	for _, op := range []regOp{
		{kind: regRead, key: 0},
		{kind: regSet, key: 2, value: 1 << 40},
		{kind: regCAS, key: 1, value: 300, expect: 70000},
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
	m.regs[1] = register{value: 5, version: 9}
	m.zxid, m.digest = 77, 88
	if got, ok := decodeMachine(m.encode()); !ok || got != m {
		t.Errorf("machine %+v round-trips as %+v", m, got)
	}
}
