package zkfmt

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/corral-db/corral/txn"
)

// FuzzDecodeSnapshot: any input decodes or fails cleanly; what decodes
// re-encodes to bytes that decode to the same snapshot.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(readFixture(f, "snapshot.a5"))
	f.Add([]byte("ZKSN"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSnapshot(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, n := range s.Nodes {
			if n.Path == "/" {
				t.Fatal("decoded the end marker as a node")
			}
		}
		if s.Digest != nil && s.Digest.Version < 2 {
			return // the hex form is read, never written
		}
		var out bytes.Buffer
		if err := EncodeSnapshot(&out, s); err != nil {
			t.Fatal(err)
		}
		s2, err := DecodeSnapshot(&out)
		if err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
		if !reflect.DeepEqual(s, s2) {
			t.Fatal("snapshot changed across encode/decode")
		}
	})
}

// FuzzLogReader: any input yields records and then io.EOF or an error,
// never a panic.
func FuzzLogReader(f *testing.F) {
	f.Add(readFixture(f, "log.a7"))
	f.Add(AppendLogRecord(AppendLogHeader(nil, 0), []byte("x")))
	f.Fuzz(func(t *testing.T, b []byte) {
		lr, err := NewLogReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := 0; i < len(b); i++ {
			rec, err := lr.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error not wrapping ErrCorrupt: %v", err)
				}
				return
			}
			var h txn.Header
			var tx txn.Txn
			_, _ = DecodeTxn(rec, &h, &tx)
		}
		t.Fatal("more records than bytes")
	})
}

// FuzzDecodeTxn: a record that decodes re-encodes to a record that
// decodes to the same transaction.
func FuzzDecodeTxn(f *testing.F) {
	for _, name := range []string{"log.5c", "log.a7"} {
		for i, rec := range logRecords(f, readFixture(f, name)) {
			if i%7 == 0 {
				f.Add(rec)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var h txn.Header
		var tx txn.Txn
		dg, err := DecodeTxn(b, &h, &tx)
		if err != nil {
			return
		}
		enc, err := AppendTxn(nil, &h, &tx, dg)
		if err != nil {
			t.Fatalf("decoded txn does not encode: %v", err)
		}
		var h2 txn.Header
		var tx2 txn.Txn
		dg2, err := DecodeTxn(enc, &h2, &tx2)
		if err != nil {
			t.Fatalf("re-encoded txn does not decode: %v", err)
		}
		if h != h2 || !reflect.DeepEqual(tx, tx2) || !reflect.DeepEqual(dg, dg2) {
			t.Fatalf("txn changed across encode/decode:\n%+v\n%+v", tx, tx2)
		}
	})
}
