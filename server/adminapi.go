package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/server/flw"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

// The methods in this file are what the AdminServer (package admin) reads
// and does; they gather what the four-letter words gather, so the two
// never disagree.

// FourLetterState is what the four-letter word word would print (srvr,
// cons, dump, wchc, mntr, hash, envi, dirs, ...), gathered as for a
// connection that is not itself a client.
func (s *Server) FourLetterState(word string) *flw.State {
	return s.flwState(nil, word)
}

// Serving reports whether the server serves requests (ZooKeeper's
// isRunning): commands that need the server answer "not currently
// serving" until it does.
func (s *Server) Serving() bool { return s.serving.Load() }

// ResetStats is srst: the server's latency and packet counters.
func (s *Server) ResetStats() { s.stats.reset() }

// ResetConnectionStats is crst: every connection's counters.
func (s *Server) ResetConnectionStats() {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	for c := range s.conns {
		c.stats.reset()
	}
}

// ZabView is this member's view of the ensemble for the leader and
// zabstate commands.
type ZabView struct {
	MyID     int64
	IsLeader bool
	// LeaderID is the leader this member follows or is; -1 when none.
	LeaderID int64
	// Phase is ZooKeeper's QuorumPeer.ZabState in lower case: election,
	// discovery, synchronization or broadcast.
	Phase string
	// Voting: this member is a voter (not an observer).
	Voting bool
	// Servers are the servers of the committed configuration (the
	// static one until a reconfig commits).
	Servers []config.Server
}

// Zab returns this member's view; ok is false for a standalone server.
func (s *Server) Zab() (v ZabView, ok bool) {
	if s.standalone {
		return v, false
	}
	e := s.opts.Ensemble
	v = ZabView{MyID: int64(e.ID), LeaderID: -1, Phase: "election"}
	s.rep.cfg.mu.Lock()
	v.Servers = slices.Clone(s.rep.cfg.servers)
	s.rep.cfg.mu.Unlock()
	for _, sv := range v.Servers {
		v.Voting = v.Voting || (uint64(sv.ID) == e.ID && !sv.Observer)
	}
	if ss := s.rep.soft.Load(); ss != nil {
		v.IsLeader = ss.Established()
		if ss.Leader != 0 {
			v.LeaderID = int64(ss.Leader)
		}
		switch ss.Phase {
		case zab.PhaseDiscovery:
			v.Phase = "discovery"
		case zab.PhaseSync:
			v.Phase = "synchronization"
		case zab.PhaseBroadcast:
			v.Phase = "broadcast"
		}
	}
	return v, true
}

// LastZxid is the zxid of the last transaction applied to the tree.
func (s *Server) LastZxid() int64 { return s.appliedZxid() }

// LastSnapshot is the newest snapshot on disk: its zxid and its file's
// modification time; ok is false when there is none.
func (s *Server) LastSnapshot() (zxid int64, modified time.Time, ok bool) {
	infos, err := snap.Newest(s.store.fs, s.store.snapDir)
	if err != nil || len(infos) == 0 {
		return 0, time.Time{}, false
	}
	if fi, err := os.Stat(filepath.Join(s.store.snapDir, infos[0].Name)); err == nil {
		modified = fi.ModTime()
	}
	return infos[0].Zxid, modified, true
}

// AdminAuthorized answers the AdminServer's authentication and
// authorization of a command that needs perm on path (ZooKeeper's
// Commands.handleAuthentication and handleAuthorization): the scheme is
// digest (auth "user:password") or ip (auth ignored; ip is the HTTP
// client's address). authenticated is false for an unknown scheme or a
// digest without a password; authorized says whether the ids may perm
// on the node.
func (s *Server) AdminAuthorized(scheme, auth, ip, path string, perm int32) (authenticated, authorized bool) {
	var ids []wire.Id
	switch scheme {
	case "digest":
		if !strings.Contains(auth, ":") {
			return false, false
		}
		id := digestID(auth)
		if s.opts.SuperDigest != "" && id == s.opts.SuperDigest {
			ids = append(ids, wire.Id{Scheme: "super", ID: ""})
		}
		ids = append(ids, wire.Id{Scheme: "digest", ID: id})
	case "ip":
		ids = []wire.Id{{Scheme: "ip", ID: ip}}
	default:
		return false, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.tree.Get(path)
	if n == nil {
		return true, false
	}
	return true, datatree.CheckPerm(s.tree.ACL(n), perm, ids)
}

// WriteSnapshotFile writes a consistent snapshot of the tree (exact at
// the returned zxid: it is taken under the tree's read lock, which holds
// writes back while it is written) to a new file in dir and returns the
// file's path, for the snapshot command to stream and then remove. The
// format is corral's snapshot format (snap, datatree).
func (s *Server) WriteSnapshotFile(dir string) (path string, zxid int64, err error) {
	f, err := os.CreateTemp(dir, "admin-snapshot-*.tmp")
	if err != nil {
		return "", 0, err
	}
	path = f.Name()
	s.mu.RLock()
	zxid = s.tree.LastZxid()
	err = s.tree.WriteSnapshot(f, nil)
	s.mu.RUnlock()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", 0, fmt.Errorf("snapshot: %w", err)
	}
	return path, zxid, nil
}

// ErrStandalone is TransferLeadership's answer on a standalone server.
var ErrStandalone = fmt.Errorf("server: standalone, no ensemble to lead")

// TransferLeadership asks this server, the ensemble's leader, to hand
// leadership to member to (replica.Driver.TransferLeadership). Writes in
// flight meanwhile are answered with connection loss and retried by
// clients on the new leader, as after any change of leader.
func (s *Server) TransferLeadership(to uint64) error {
	if s.standalone {
		return ErrStandalone
	}
	return s.rep.d.TransferLeadership(to)
}
