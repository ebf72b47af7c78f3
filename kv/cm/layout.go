package cm

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/corral-db/corral/kv/ring"
)

// DefaultRoot is the znode under which the configuration lives.
const DefaultRoot = "/acazoo"

// Record format versions, in the "v" field of every JSON record.
const recordV1 = 1

// Limits on what a record may hold, so that a bad znode cannot make a
// reader allocate without bound.
const (
	maxMembers = 64
	maxAddrLen = 255
)

// Member is one replica of a group: its zab server id and the address of
// its KV API.
type Member struct {
	ID   uint64 `json:"id"`
	Addr string `json:"addr"`
}

// GroupInfo is a group's registration: its members.
type GroupInfo struct {
	Members []Member `json:"members"`
}

// Leader is what a group's leader records about itself: the zab epoch in
// which it leads, its server id and its API address.
type Leader struct {
	Epoch uint64 `json:"epoch"`
	ID    uint64 `json:"id"`
	Addr  string `json:"addr"`
}

// ErrBadRecord wraps every failure to parse a znode's data.
var ErrBadRecord = errors.New("cm: bad record")

type groupRecord struct {
	V int `json:"v"`
	GroupInfo
}

type leaderRecord struct {
	V int `json:"v"`
	Leader
}

func checkMember(m Member) error {
	if m.Addr == "" || len(m.Addr) > maxAddrLen {
		return fmt.Errorf("member %d: address %q: want 1..%d bytes", m.ID, m.Addr, maxAddrLen)
	}
	return nil
}

func (gi GroupInfo) validate() error {
	if len(gi.Members) == 0 || len(gi.Members) > maxMembers {
		return fmt.Errorf("%d members, want 1..%d", len(gi.Members), maxMembers)
	}
	seen := make(map[uint64]bool, len(gi.Members))
	for _, m := range gi.Members {
		if err := checkMember(m); err != nil {
			return err
		}
		if seen[m.ID] {
			return fmt.Errorf("member id %d twice", m.ID)
		}
		seen[m.ID] = true
	}
	return nil
}

func (l Leader) validate() error {
	return checkMember(Member{ID: l.ID, Addr: l.Addr})
}

func encodeGroup(gi GroupInfo) []byte {
	b, _ := json.Marshal(groupRecord{V: recordV1, GroupInfo: gi})
	return b
}

func decodeGroup(b []byte) (GroupInfo, error) {
	var r groupRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return GroupInfo{}, fmt.Errorf("%w: group: %v", ErrBadRecord, err)
	}
	if r.V != recordV1 {
		return GroupInfo{}, fmt.Errorf("%w: group record version %d, want %d", ErrBadRecord, r.V, recordV1)
	}
	if err := r.GroupInfo.validate(); err != nil {
		return GroupInfo{}, fmt.Errorf("%w: group: %v", ErrBadRecord, err)
	}
	return r.GroupInfo, nil
}

func encodeLeader(l Leader) []byte {
	b, _ := json.Marshal(leaderRecord{V: recordV1, Leader: l})
	return b
}

func decodeLeader(b []byte) (Leader, error) {
	var r leaderRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return Leader{}, fmt.Errorf("%w: leader: %v", ErrBadRecord, err)
	}
	if r.V != recordV1 {
		return Leader{}, fmt.Errorf("%w: leader record version %d, want %d", ErrBadRecord, r.V, recordV1)
	}
	if err := r.Leader.validate(); err != nil {
		return Leader{}, fmt.Errorf("%w: leader: %v", ErrBadRecord, err)
	}
	return r.Leader, nil
}

// layout names the znodes under one root.
type layout struct{ root string }

func (l layout) ringPath() string   { return l.root + "/ring" }
func (l layout) groupsPath() string { return l.root + "/rgs" }
func (l layout) groupPath(g ring.GroupID) string {
	return l.groupsPath() + "/" + strconv.FormatUint(uint64(g), 10)
}
func (l layout) leaderPath(g ring.GroupID) string { return l.groupPath(g) + "/leader" }

// nodeKind says which record a path under the root is.
type nodeKind uint8

const (
	nodeOther  nodeKind = iota // not one of ours (or the root, or rgs)
	nodeRing                   // <root>/ring
	nodeGroup                  // <root>/rgs/<g>
	nodeLeader                 // <root>/rgs/<g>/leader
)

// parseGroupID parses a group znode's name: a canonical decimal in 1..2^32-1.
func parseGroupID(s string) (ring.GroupID, bool) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != s {
		return 0, false
	}
	return ring.GroupID(n), true
}

// classify maps a path to the record it holds.
func (l layout) classify(p string) (nodeKind, ring.GroupID) {
	if p == l.ringPath() {
		return nodeRing, 0
	}
	rest, ok := strings.CutPrefix(p, l.groupsPath()+"/")
	if !ok {
		return nodeOther, 0
	}
	name, sub, _ := strings.Cut(rest, "/")
	g, ok := parseGroupID(name)
	if !ok {
		return nodeOther, 0
	}
	switch sub {
	case "":
		return nodeGroup, g
	case "leader":
		return nodeLeader, g
	}
	return nodeOther, 0
}

// checkRoot accepts an absolute, clean, non-root path.
func checkRoot(root string) error {
	if root == "" || root[0] != '/' || root == "/" || path.Clean(root) != root {
		return fmt.Errorf("cm: root %q: want an absolute clean path other than /", root)
	}
	return nil
}
