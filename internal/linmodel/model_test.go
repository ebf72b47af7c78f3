package linmodel

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestModel shows the model and the check can fail, on histories small
// enough to reason about by hand.
func TestModel(t *testing.T) {
	op := func(client int, in Op, call, ret int64, out Output) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	read := func(key int) Op { return Op{Kind: Read, Key: key} }
	cread := func(key int) Op { return Op{Kind: ConfirmedRead, Key: key} }
	set := func(key int, v int64) Op { return Op{Kind: Set, Key: key, Value: v} }
	cas := func(key int, expect int32, v int64) Op { return Op{Kind: CAS, Key: key, Expect: expect, Value: v} }
	got := func(v int64, ver int32) Output { return Output{Result: Result{OK: true, Value: v, Version: ver}} }
	ok := func(ver int32) Output { return Output{Result: Result{OK: true, Version: ver}} }
	refused := Output{}
	unknown := Output{Unknown: true}

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
		{"lost update: two CAS from the same version both succeed", []porcupine.Operation{
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
		{"read of a value nobody wrote", []porcupine.Operation{
			op(0, set(0, 5), 0, 10, ok(1)),
			op(1, read(0), 20, 30, got(6, 1)),
		}, false},
		{"unknown write that never happened", []porcupine.Operation{
			op(0, set(0, 5), 0, UnknownReturn, unknown),
			op(1, read(0), 20, 30, got(0, 0)),
			op(1, read(0), 40, 50, got(0, 0)),
		}, true},
		{"unknown write that happened later", []porcupine.Operation{
			op(0, set(0, 5), 0, UnknownReturn, unknown),
			op(1, read(0), 20, 30, got(0, 0)),
			op(1, read(0), 40, 50, got(5, 1)),
		}, true},
		{"unknown write seen, then unseen", []porcupine.Operation{
			op(0, set(0, 5), 0, UnknownReturn, unknown),
			op(1, read(0), 20, 30, got(5, 1)),
			op(1, read(0), 40, 50, got(0, 0)),
		}, false},
		{"unknown CAS cannot apply at a stale version", []porcupine.Operation{
			op(0, set(0, 3), 0, 10, ok(1)),
			op(1, cas(0, 0, 5), 20, UnknownReturn, unknown),
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
		res, _ := porcupine.CheckOperationsVerbose(Model, c.history, 0)
		want := porcupine.Illegal
		if c.want {
			want = porcupine.Ok
		}
		if res != want {
			t.Errorf("%s: porcupine says %s, want %s", c.name, res, want)
		}
	}
}
