package server

import (
	"testing"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// BenchmarkReferenced: the check of a data log against the tree (at open
// and at each SNAP install) over a log of 200,000 packed 64 KiB entries;
// ns/op and B/op are per check.
//
//	go test ./server -run XXX -bench Referenced -benchmem
func BenchmarkReferenced(b *testing.B) {
	o := Options{RlogRoot: "/logs"}
	tree := datatree.New()
	packLogs(&o, tree)
	var res datatree.Result
	z := int64(1)
	apply := func(path string, data []byte) {
		z++
		h := txn.Header{Zxid: z, Time: z, Type: wire.OpCreate}
		tx := txn.Txn{Type: wire.OpCreate, Path: path, Data: data, ACL: wire.OpenACLUnsafe, ParentCVersion: -1}
		tree.Apply(&h, &tx, &res)
	}
	apply("/logs", nil)
	apply("/logs/a", nil)
	const n = 200000
	for i := range n {
		apply(entryName(i, 65536), entryRef{zxid: z + 1, length: 65536, crc: uint32(i)}.encode())
	}
	d := &logData{root: "/logs"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if refs := d.referenced(tree); len(refs) != n {
			b.Fatalf("%d references, want %d", len(refs), n)
		}
	}
}
