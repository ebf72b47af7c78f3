package datatree

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

func BenchmarkApplyCreate(b *testing.B) {
	tr := New()
	var r Result
	tr.Apply(&txn.Header{Zxid: 1}, createTxn("/bench", nil, 1), &r)
	txs := make([]txn.Txn, b.N)
	data := make([]byte, 64)
	for i := range txs {
		txs[i] = txn.Txn{Type: wire.OpCreate, Path: fmt.Sprintf("/bench/n%010d", i), Data: data, ACL: wire.OpenACLUnsafe, ParentCVersion: int32(i + 1)}
	}
	h := txn.Header{SessionID: sessA, Time: 1}
	r.Events = make([]Event, 0, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range txs {
		h.Zxid = int64(i + 2)
		r.Events = r.Events[:0]
		tr.Apply(&h, &txs[i], &r)
	}
}

func BenchmarkApplyCreateDelete(b *testing.B) {
	tr := New()
	var r Result
	tr.Apply(&txn.Header{Zxid: 1}, createTxn("/q", nil, 1), &r)
	cr := txn.Txn{Type: wire.OpCreate, Path: "/q/lock", Data: []byte("x"), ACL: wire.OpenACLUnsafe, Ephemeral: true}
	del := txn.Txn{Type: wire.OpDelete, Path: "/q/lock"}
	h := txn.Header{SessionID: sessA, Time: 1, Zxid: 1}
	r.Events = make([]Event, 0, 2)
	b.ReportAllocs()
	for b.Loop() {
		h.Zxid++
		cr.ParentCVersion = -1
		r.Events = r.Events[:0]
		tr.Apply(&h, &cr, &r)
		h.Zxid++
		r.Events = r.Events[:0]
		tr.Apply(&h, &del, &r)
	}
}

func BenchmarkApplySetData(b *testing.B) {
	tr := New()
	var r Result
	const n = 1000
	txs := make([]txn.Txn, n)
	for i := range txs {
		p := fmt.Sprintf("/n%04d", i)
		tr.Apply(&txn.Header{Zxid: int64(i + 1)}, createTxn(p, nil, int32(i+1)), &r)
		txs[i] = txn.Txn{Type: wire.OpSetData, Path: p, Data: make([]byte, 128)}
	}
	h := txn.Header{SessionID: sessA, Time: 1, Zxid: n}
	r.Events = make([]Event, 0, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.Zxid++
		tx := &txs[i%n]
		tx.Version++
		r.Events = r.Events[:0]
		tr.Apply(&h, tx, &r)
		i++
	}
}

func BenchmarkGet(b *testing.B) {
	tr := New()
	var r Result
	const n = 100_000
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("/app/node-%07d", i)
	}
	tr.Apply(&txn.Header{Zxid: 1}, createTxn("/app", nil, 1), &r)
	for i, p := range paths {
		r.Events = r.Events[:0]
		tr.Apply(&txn.Header{Zxid: int64(i + 2)}, createTxn(p, []byte("data"), int32(i+1)), &r)
	}
	var st wire.Stat
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		n := tr.Get(paths[i%n])
		n.Stat(&st)
		i++
	}
}

func BenchmarkWriteSnapshot(b *testing.B) {
	tr := New()
	var r Result
	tr.Apply(&txn.Header{Zxid: 1}, createTxn("/app", nil, 1), &r)
	for i := 0; i < 100_000; i++ {
		r.Events = r.Events[:0]
		tr.Apply(&txn.Header{Zxid: int64(i + 2)}, createTxn(fmt.Sprintf("/app/node-%07d", i), make([]byte, 32), int32(i+1)), &r)
	}
	var buf bytes.Buffer
	_ = tr.WriteSnapshot(&buf, nil)
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.WriteSnapshot(io.Discard, func(write func()) { write() }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadSnapshot(b *testing.B) {
	tr := New()
	var r Result
	tr.Apply(&txn.Header{Zxid: 1}, createTxn("/app", nil, 1), &r)
	for i := 0; i < 100_000; i++ {
		r.Events = r.Events[:0]
		tr.Apply(&txn.Header{Zxid: int64(i + 2)}, createTxn(fmt.Sprintf("/app/node-%07d", i), make([]byte, 32), int32(i+1)), &r)
	}
	var buf bytes.Buffer
	_ = tr.WriteSnapshot(&buf, nil)
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
