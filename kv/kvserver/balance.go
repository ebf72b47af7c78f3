package kvserver

import (
	"slices"

	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/ring"
)

// The leader balancer evens out the RGs' leaders over the nodes: a node
// leading at least two more RGs than another node that is a synced
// follower of one of them hands that RG's leadership over
// (TransferLeadership). Each node decides for itself, at most one hand-over
// per balance round, from the CM's leader records, so two nodes never
// move the same RG; the gap of two means a hand-over never makes the
// giver poorer than the taker, so leaderships do not bounce back.
// Liveness comes from the leader's own view: only a learner in the
// broadcast phase (zab.LearnerStatus.Synced) receives one.
//
// The compaction-aware leader change (leaderchange.go) moves leaders too,
// for another reason. The two take turns: the balancer skips an RG whose
// leader change (policy other than fixed) saw a leader change, its own
// or anyone's, less than the policy's MinInterval ago, and the leader
// change counts the balancer's hand-overs among the changes it waits out.
// A hand-over by either thus stands for at least MinInterval.

// leaderCounts is how many RGs each node leads according to st, with
// every registered member counted (0 for nodes that lead none). Member
// ids are node ids.
func leaderCounts(st *cm.State) map[uint64]int {
	counts := map[uint64]int{}
	if st == nil {
		return counts
	}
	for _, gs := range st.Groups {
		for _, m := range gs.Info.Members {
			if _, ok := counts[m.ID]; !ok {
				counts[m.ID] = 0
			}
		}
	}
	for _, gs := range st.Groups {
		if gs.Leader != nil {
			counts[gs.Leader.ID]++
		}
	}
	return counts
}

// pickHandOver chooses one RG this node (self) leads to hand to a synced
// follower leading at least two fewer RGs: the follower with the fewest
// (then the lowest id), over the RGs in id order. led maps each RG self
// leads to its synced followers.
func pickHandOver(self uint64, counts map[uint64]int, led map[ring.GroupID][]uint64) (ring.GroupID, uint64, bool) {
	gs := make([]ring.GroupID, 0, len(led))
	for g := range led {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	var (
		bestG  ring.GroupID
		bestTo uint64
		found  bool
	)
	for _, g := range gs {
		for _, to := range led[g] {
			if to == self || counts[self]-counts[to] < 2 {
				continue
			}
			if !found || counts[to] < counts[bestTo] || (counts[to] == counts[bestTo] && to < bestTo) {
				bestG, bestTo, found = g, to, true
			}
		}
	}
	return bestG, bestTo, found
}
