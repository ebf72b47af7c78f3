package kvserver

import (
	"testing"
	"time"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

func TestLeaderCounts(t *testing.T) {
	members := cm.GroupInfo{Members: []cm.Member{{ID: 1, Addr: "a"}, {ID: 2, Addr: "b"}, {ID: 3, Addr: "c"}}}
	st := &cm.State{Groups: map[ring.GroupID]cm.GroupState{
		1: {Info: members, Leader: &cm.Leader{Epoch: 1, ID: 2, Addr: "b"}},
		2: {Info: members, Leader: &cm.Leader{Epoch: 3, ID: 2, Addr: "b"}},
		3: {Info: members},
	}}
	got := leaderCounts(st)
	if len(got) != 3 || got[1] != 0 || got[2] != 2 || got[3] != 0 {
		t.Fatalf("counts %v", got)
	}
	if len(leaderCounts(nil)) != 0 {
		t.Fatal("counts of no state")
	}
}

func TestPickHandOver(t *testing.T) {
	for _, tc := range []struct {
		name   string
		self   uint64
		counts map[uint64]int
		led    map[ring.GroupID][]uint64
		g      ring.GroupID
		to     uint64
		ok     bool
	}{
		{"balanced", 1, map[uint64]int{1: 1, 2: 1, 3: 1}, map[ring.GroupID][]uint64{1: {2, 3}}, 0, 0, false},
		{"a gap of one stays", 1, map[uint64]int{1: 2, 2: 1, 3: 1}, map[ring.GroupID][]uint64{1: {2, 3}, 2: {2, 3}}, 0, 0, false},
		{"to the poorest synced follower", 1, map[uint64]int{1: 3, 2: 1, 3: 0}, map[ring.GroupID][]uint64{1: {2, 3}, 2: {2, 3}, 3: {2, 3}}, 1, 3, true},
		{"not to a follower that is not synced", 1, map[uint64]int{1: 2, 2: 1, 3: 0}, map[ring.GroupID][]uint64{1: {2}, 2: {2}}, 0, 0, false},
		{"ties go to the lowest id, first RG", 2, map[uint64]int{1: 0, 2: 2, 3: 0}, map[ring.GroupID][]uint64{5: {3}, 4: {1, 3}}, 4, 1, true},
		{"leading nothing", 1, map[uint64]int{1: 0, 2: 3}, nil, 0, 0, false},
	} {
		g, to, ok := pickHandOver(tc.self, tc.counts, tc.led)
		if g != tc.g || to != tc.to || ok != tc.ok {
			t.Errorf("%s: got (%v, %d, %v), want (%v, %d, %v)", tc.name, g, to, ok, tc.g, tc.to, tc.ok)
		}
	}
}

// TestBalancerWaitsOutLeaderChange: under a leader-change policy the
// balancer may move an RG only once the last leader change its replica
// saw is MinInterval old; under the fixed policy always.
func TestBalancerWaitsOutLeaderChange(t *testing.T) {
	fixed := &leaderChange{}
	if !fixed.settled(time.Now()) {
		t.Fatal("fixed policy: balancer held back")
	}
	lc := &leaderChange{cfg: kv.LeaderChangeConfig{Policy: kv.PolicyCoolest, MinInterval: time.Minute}}
	t0 := time.Unix(1000, 0)
	if lc.settled(t0) {
		t.Fatal("settled before the leader change ran")
	}
	lc.noteChange(t0)
	if lc.settled(t0.Add(59 * time.Second)) {
		t.Fatal("settled within MinInterval of a leader change")
	}
	if !lc.settled(t0.Add(time.Minute)) {
		t.Fatal("not settled MinInterval after a leader change")
	}
	dflt := &leaderChange{cfg: kv.LeaderChangeConfig{Policy: kv.PolicyRandom}}
	dflt.noteChange(t0)
	if dflt.settled(t0.Add(kv.DefaultLeaderChangeMinInterval - time.Second)) {
		t.Fatal("default MinInterval not applied")
	}
}
