package cm

import (
	"testing"

	"github.com/corral-db/corral/kv/ring"
)

func TestClassify(t *testing.T) {
	l := layout{root: "/acazoo"}
	for p, want := range map[string]struct {
		kind nodeKind
		g    ring.GroupID
	}{
		"/acazoo/ring":              {nodeRing, 0},
		"/acazoo/rgs/7":             {nodeGroup, 7},
		"/acazoo/rgs/4294967295":    {nodeGroup, 4294967295},
		"/acazoo/rgs/7/leader":      {nodeLeader, 7},
		"/acazoo/rgs/07":            {nodeOther, 0},
		"/acazoo/rgs/0":             {nodeOther, 0},
		"/acazoo/rgs/4294967296":    {nodeOther, 0},
		"/acazoo/rgs/-1":            {nodeOther, 0},
		"/acazoo/rgs/7/other":       {nodeOther, 0},
		"/acazoo/rgs/7/leader/x":    {nodeOther, 0},
		"/acazoo/rgs":               {nodeOther, 0},
		"/acazoo":                   {nodeOther, 0},
		"/acazooX/ring":             {nodeOther, 0},
		"/elsewhere/acazoo/rgs/1":   {nodeOther, 0},
		"/acazoo/ringX":             {nodeOther, 0},
		"/acazoo/rgs/7/leader/../x": {nodeOther, 0},
	} {
		if k, g := l.classify(p); k != want.kind || g != want.g {
			t.Errorf("classify(%q) = %d %v, want %d %v", p, k, g, want.kind, want.g)
		}
	}
}

// FuzzDecodeRecords: the znode record decoders never panic, and what they
// accept is valid and round-trips.
func FuzzDecodeRecords(f *testing.F) {
	f.Add(encodeGroup(members(1, 2, 3)))
	f.Add(encodeLeader(leader(3, 2)))
	f.Add([]byte(`{"v":1,"members":[{"id":1,"addr":""}]}`))
	f.Add([]byte(`{"v":1,"epoch":18446744073709551615,"id":1,"addr":"h:1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if gi, err := decodeGroup(b); err == nil {
			if err := gi.validate(); err != nil {
				t.Fatalf("accepted an invalid group %+v: %v", gi, err)
			}
			if again, err := decodeGroup(encodeGroup(gi)); err != nil || len(again.Members) != len(gi.Members) {
				t.Fatalf("group %+v does not round-trip: %v", gi, err)
			}
		}
		if l, err := decodeLeader(b); err == nil {
			if again, err := decodeLeader(encodeLeader(l)); err != nil || again != l {
				t.Fatalf("leader %+v does not round-trip: %+v %v", l, again, err)
			}
		}
	})
}
