package server

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// Dynamic reconfiguration, the server's side (docs/design/reconfig.md;
// zab/membership.go does the replication's). The reconfig operation
// (OpCode 16) is decided by the leader's prep as ZooKeeper 3.9's
// PrepRequestProcessor decides it, into a transaction that sets
// /zookeeper/config to the new configuration's text (server lines and
// version=<its own zxid in hex>) with version -1. zab reads that
// transaction as a membership change (decodeMembership). When it commits,
// every member adopts it (reconfigCommitted): the transport's peers and
// the dynamic configuration file. A member the change leaves out goes on
// as a non-voting follower and serves clients, as a removed ZooKeeper
// 3.9.3 server does, until its operator stops it.

// membership is this member's view of the configuration with addresses.
type membership struct {
	mu sync.Mutex
	// servers and version are the committed configuration; text is its
	// /zookeeper/config text.
	servers []config.Server
	version int64
	text    []byte
	// lastSeen is the version of the last configuration this leader
	// proposed or knows committed (ZooKeeper's lastSeenQuorumVerifier).
	lastSeen int64
	// removed: the committed configuration leaves this server out.
	removed bool
	// next is the version of the configuration in zoo.cfg.dynamic.next
	// (0: none): the last reconfig proposal this member accepted, until
	// a configuration at least as new is committed.
	next int64
}

func (m *membership) init(e *Ensemble) {
	m.servers = slices.Clone(e.Servers)
	m.version = e.ConfigVersion
	m.lastSeen = e.ConfigVersion
	m.text = e.Config
	m.next = e.NextConfigVersion
}

// configText is the text of the configuration this member has committed.
func (rp *replica) configText() ([]byte, int64) {
	rp.cfg.mu.Lock()
	defer rp.cfg.mu.Unlock()
	return rp.cfg.text, rp.cfg.version
}

// decodeMembership is zab's Config.DecodeMembership for the tree's
// transactions: a committed reconfig transaction (header type reconfig)
// carries the new configuration's text. Other entries are told apart by
// their header alone, without decoding them.
func decodeMembership(data []byte) (zab.Membership, bool) {
	text, ok := reconfigText(data)
	if !ok {
		return zab.Membership{}, false
	}
	servers, _, _, err := config.ParseDynamic(string(text))
	if err != nil {
		return zab.Membership{}, false
	}
	return membershipOf(servers), true
}

// reconfigText returns the configuration text of a reconfig transaction,
// and false for any other entry (told apart by the header alone).
func reconfigText(data []byte) ([]byte, bool) {
	if len(data) == 0 || data[0] != txn.CodecVersion {
		return nil, false
	}
	b := data[1:]
	var typ int64
	for range 5 { // SessionID Cxid Zxid Time Type
		v, n := binary.Varint(b)
		if n <= 0 {
			return nil, false
		}
		typ, b = v, b[n:]
	}
	if wire.Op(typ) != wire.OpReconfig {
		return nil, false
	}
	var h txn.Header
	var tx txn.Txn
	if err := txn.Decode(data, &h, &tx); err != nil || tx.Type != wire.OpReconfig {
		return nil, false
	}
	return tx.Data, true
}

// reconfigAccepted is the driver's OnAppend: a reconfig proposal among
// the entries this member is about to log and acknowledge is written to
// zoo.cfg.dynamic.next first, as a ZooKeeper 3.9 member does
// (QuorumPeer.setLastSeenQuorumVerifier with writeToDisk, from the
// leader's propose, the follower's PROPOSAL and the learner's sync). A
// member that stops before the change commits starts with it as the last
// proposed configuration (config.Config.NextServers); the commit replaces
// the file by zoo.cfg.dynamic.<version> (reconfigCommitted).
func (rp *replica) reconfigAccepted(ents []zab.Entry) {
	f := rp.ens.ConfigFile
	if f == "" {
		return
	}
	for _, e := range ents {
		text, ok := reconfigText(e.Data)
		if !ok {
			continue
		}
		v := int64(e.Zxid)
		servers, _, _, err := config.ParseDynamic(string(text))
		if err != nil {
			rp.log.Error("proposed configuration does not parse; not recorded", "zxid", hex(v), "err", err)
			continue
		}
		rp.cfg.mu.Lock()
		stale := v <= rp.cfg.version || v <= rp.cfg.next
		rp.cfg.mu.Unlock()
		if stale {
			continue
		}
		if err := config.WriteNextDynamicConfig(f, servers, v); err != nil {
			rp.log.Error("cannot write the proposed configuration", "path", config.NextDynamicFileName(f), "err", err)
			continue
		}
		rp.cfg.mu.Lock()
		rp.cfg.next = v
		rp.cfg.mu.Unlock()
		rp.log.Info("proposed configuration written", "path", config.NextDynamicFileName(f), "version", hex(v))
	}
}

func membershipOf(servers []config.Server) zab.Membership {
	var m zab.Membership
	for _, s := range servers {
		if s.Observer {
			m.Observers = append(m.Observers, uint64(s.ID))
		} else {
			m.Voters = append(m.Voters, uint64(s.ID))
		}
	}
	return m
}

// prepReconfig decides a reconfig on the leader, in ZooKeeper's order
// (PrepRequestProcessor, OpCode.reconfig): disabled, session, standalone,
// a change in progress, the expected version, the new configuration
// (incremental or bulk), its size, a synchronized quorum of it, and last
// WRITE permission on /zookeeper/config (the super user, in practice:
// the node is world-readable only).
func (s *Server) prepReconfig(r *request, rr *wire.ReconfigRequest, tx *txn.Txn) error {
	e := s.opts.Ensemble
	if e == nil || !e.ReconfigEnabled {
		return wire.CodeReconfigDisabled
	}
	if err := s.checkSession(r); err != nil {
		return err
	}
	rp := s.rep
	if rp == nil {
		return wire.CodeUnimplemented
	}
	rp.cfg.mu.Lock()
	cur, version, lastSeen := slices.Clone(rp.cfg.servers), rp.cfg.version, rp.cfg.lastSeen
	rp.cfg.mu.Unlock()
	if lastSeen != version {
		return wire.CodeReconfigInProgress
	}
	if rr.CurConfigID != -1 && rr.CurConfigID != lastSeen {
		return wire.CodeBadVersion
	}
	next, err := nextConfig(cur, rr)
	if err != nil {
		return err
	}
	voters := len(membershipOf(next).Voters)
	if (e.StandaloneEnabled && voters < 2) || voters < 1 {
		return wire.CodeBadArguments
	}
	switch err := rp.d.CheckMembershipLocked(membershipOf(next)); {
	case err == nil:
	case errors.Is(err, zab.ErrReconfigInProgress):
		return wire.CodeReconfigInProgress
	case errors.Is(err, zab.ErrNewConfigNoQuorum):
		return wire.CodeNewConfigNoQuorum
	case errors.Is(err, zab.ErrInvalidMembership):
		return wire.CodeBadArguments
	default:
		return err
	}
	rec, err := s.permitted(r, datatree.ConfigPath, wire.PermWrite)
	if err != nil {
		return err
	}
	tx.Type = wire.OpReconfig
	tx.Path = datatree.ConfigPath
	tx.Data = []byte(config.FormatQuorumConfig(next, r.hdr.Zxid))
	tx.Version = -1
	rec.stat.Version = -1
	rec.stat.Mtime = r.hdr.Time
	rec.stat.Mzxid = r.hdr.Zxid
	s.put(r, datatree.ConfigPath, rec)
	rp.cfg.mu.Lock()
	rp.cfg.lastSeen = r.hdr.Zxid
	rp.cfg.mu.Unlock()
	return nil
}

// nextConfig is the configuration a reconfig asks for: newMembers (commas
// or line breaks between servers) replaces the servers; otherwise
// leavingServers (ids) are removed and joiningServers (server.N=... specs)
// added or replaced. Bad specs are BADARGUMENTS; a leaving id that is not
// a number is MARSHALLINGERROR (ZooKeeper's NumberFormatException).
func nextConfig(cur []config.Server, rr *wire.ReconfigRequest) ([]config.Server, error) {
	if rr.NewMembers != "" {
		servers, _, _, err := config.ParseDynamic(strings.ReplaceAll(rr.NewMembers, ",", "\n"))
		if err != nil {
			return nil, wire.CodeBadArguments
		}
		for _, s := range servers {
			if s.ClientPort == 0 {
				return nil, wire.CodeBadArguments
			}
		}
		if err := config.CheckAddresses(servers); err != nil {
			return nil, wire.CodeBadArguments
		}
		return servers, nil
	}
	next := map[int64]config.Server{}
	for _, s := range cur {
		next[s.ID] = s
	}
	for _, l := range splitList(rr.LeavingServers) {
		id, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return nil, wire.CodeMarshallingError
		}
		delete(next, id)
	}
	for _, j := range splitList(rr.JoiningServers) {
		// ZooKeeper: "server.x=spec" must split in two at '=' (else
		// BADARGUMENTS), then x must be a number (else a
		// NumberFormatException: MARSHALLINGERROR).
		key, _, ok := strings.Cut(j, "=")
		if !ok || strings.Count(j, "=") != 1 {
			return nil, wire.CodeBadArguments
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(key[strings.LastIndexByte(key, '.')+1:]), 10, 64); err != nil {
			return nil, wire.CodeMarshallingError
		}
		s, err := config.ParseServerSpec(j)
		if err != nil || s.ClientPort == 0 {
			return nil, wire.CodeBadArguments
		}
		next[s.ID] = s
	}
	out := make([]config.Server, 0, len(next))
	for _, s := range next {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b config.Server) int { return int(a.ID - b.ID) })
	if err := config.CheckAddresses(out); err != nil {
		return nil, wire.CodeBadArguments
	}
	return out, nil
}

// splitList is StringUtils.split(s, ","): trimmed, empties dropped.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// reconfigCommitted adopts a configuration that committed at zxid (its
// text as /zookeeper/config holds it): the transport connects to the new
// servers and drops the removed ones, and the dynamic file is written. A
// server the configuration leaves out says so; like ZooKeeper's, it keeps
// following (without a vote) and serving while it can reach the leader.
func (rp *replica) reconfigCommitted(text []byte, zxid int64) {
	servers, _, _, err := config.ParseDynamic(string(text))
	if err != nil {
		rp.log.Error("committed configuration does not parse; keeping the previous one", "zxid", hex(zxid), "err", err)
		return
	}
	rp.cfg.mu.Lock()
	if zxid <= rp.cfg.version {
		rp.cfg.mu.Unlock()
		return
	}
	rp.cfg.servers, rp.cfg.version, rp.cfg.text = servers, zxid, slices.Clone(text)
	rp.cfg.lastSeen = max(rp.cfg.lastSeen, zxid)
	dropNext := rp.cfg.next != 0 && rp.cfg.next <= zxid
	if dropNext {
		rp.cfg.next = 0
	}
	self := slices.IndexFunc(servers, func(s config.Server) bool { return uint64(s.ID) == rp.id })
	wasRemoved := rp.cfg.removed
	rp.cfg.removed = self < 0
	rp.cfg.mu.Unlock()
	rp.log.Info("configuration committed", "version", hex(zxid), "servers", len(servers))
	if rp.tr != nil {
		peers := map[uint64]transport.Peer{}
		for _, s := range servers {
			peers[uint64(s.ID)] = transport.Peer{QuorumAddr: s.QuorumAddr(), ElectionAddr: s.ElectionAddr()}
		}
		if tcp, ok := rp.tr.(*transport.TCP); ok {
			if err := tcp.SetPeers(peers); err != nil {
				rp.log.Error("cannot update the transport's peers", "err", err)
			}
		}
	}
	if f := rp.ens.ConfigFile; f != "" {
		erase := self >= 0 && servers[self].ClientPort != 0
		if path, err := config.WriteDynamicConfig(f, servers, zxid, erase); err != nil {
			rp.log.Error("cannot write the dynamic configuration file", "static", f, "err", err)
		} else {
			rp.log.Info("dynamic configuration file written", "path", path)
		}
		// The proposal it recorded is committed (or was overtaken):
		// ZooKeeper deletes the file once the last configuration it saw
		// proposed is the committed one.
		if dropNext {
			if err := config.RemoveNextDynamicConfig(f); err != nil {
				rp.log.Error("cannot remove the proposed configuration file", "err", err)
			}
		}
	}
	switch {
	case self < 0 && !wasRemoved:
		rp.log.Warn("this server is not in the committed configuration: it follows without a vote while it "+
			"can reach the leader, as a removed ZooKeeper server does; stop it", "version", hex(zxid))
	case self >= 0 && wasRemoved:
		rp.log.Info("this server is in the ensemble again", "version", hex(zxid))
	}
}

// adoptTreeConfig is for a tree this member starts from or installs: a
// /zookeeper/config written by a reconfig newer than this member's
// configuration (committed while it was away, or before a crash let it
// write its dynamic file) is adopted; it reports whether it was.
func (rp *replica) adoptTreeConfig(t *datatree.Tree) bool {
	n := t.Get(datatree.ConfigPath)
	if n == nil {
		return false
	}
	st := n.Persisted()
	rp.cfg.mu.Lock()
	newer := st.Mzxid > rp.cfg.version
	rp.cfg.mu.Unlock()
	if !newer || len(n.Data()) == 0 {
		return false
	}
	rp.reconfigCommitted(n.Data(), st.Mzxid)
	return true
}
