package server

import (
	"testing"

	"github.com/corral-db/corral/zab"
)

// TestRecordPool: a record is reused only after the proposals up to its
// own are released, and records too large to keep are not pooled.
func TestRecordPool(t *testing.T) {
	var p recordPool
	bufs := make([][]byte, 3)
	for i := range bufs {
		bufs[i] = append(p.get(100), byte(i))
		p.proposed(zab.Zxid(i+1), bufs[i])
	}
	if b := p.get(100); cap(b) > 0 && &b[:1][0] == &bufs[0][0] {
		t.Fatal("a record was handed out again before it was released")
	}
	p.release(2)
	if len(p.out) != 1 || p.out[0].zxid != 3 {
		t.Fatalf("after release(2) still out: %v", p.out)
	}
	if len(p.free) != 2 {
		t.Fatalf("after release(2) %d records free, want 2", len(p.free))
	}
	got := p.get(100)
	if len(got) != 0 || (&got[:1][0] != &bufs[0][0] && &got[:1][0] != &bufs[1][0]) {
		t.Fatal("get did not reuse a released record")
	}
	big := p.get(maxPooledRecord + 1)
	p.proposed(4, big)
	p.release(4)
	for _, b := range p.free {
		if cap(b) > maxPooledRecord {
			t.Fatalf("a record of %d bytes was pooled", cap(b))
		}
	}
	if len(p.out) != 0 {
		t.Fatalf("after release(4) still out: %v", p.out)
	}
}
