package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zkfmt"
)

// treeDump is every node of a tree: path → data, stored stat and ACL.
type dumpedNode struct {
	data []byte
	stat datatree.PStat
	acl  []wire.ACL
}

func dumpTree(s *Server) map[string]dumpedNode {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]dumpedNode{}
	var walk func(p string)
	walk = func(p string) {
		n := s.tree.Get(p)
		if n == nil {
			return
		}
		out[p] = dumpedNode{data: bytes.Clone(n.Data()), stat: n.Persisted(), acl: slices.Clone(s.tree.ACL(n))}
		for _, c := range n.Children(nil) {
			if p == "/" {
				walk("/" + c)
			} else {
				walk(p + "/" + c)
			}
		}
	}
	walk("/")
	return out
}

func sameTrees(t *testing.T, want, got map[string]dumpedNode, ignore func(string) bool) {
	t.Helper()
	for p, w := range want {
		if ignore != nil && ignore(p) {
			continue
		}
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s missing after restore", p)
		case !bytes.Equal(w.data, g.data) || w.stat != g.stat || !slices.Equal(w.acl, g.acl):
			t.Errorf("%s differs:\nwant %q %+v %v\ngot  %q %+v %v", p, w.data, w.stat, w.acl, g.data, g.stat, g.acl)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok && (ignore == nil || !ignore(p)) {
			t.Errorf("%s present after restore, not in the snapshot", p)
		}
	}
}

// fillTree writes a small tree with data, versions, ACLs, sequential and
// ephemeral nodes through a client.
func fillTree(t *testing.T, c *tclient) {
	t.Helper()
	digestACL := []wire.ACL{{Perms: wire.PermRead | wire.PermAdmin, ID: wire.Id{Scheme: "digest", ID: "u:JEKyVeUb0zSk0MvFzE1D1dHW9C4="}}}
	for _, p := range []string{"/app", "/app/cfg", "/app/q"} {
		if _, code := c.create(p, []byte("v"+p), 0); code != 0 {
			t.Fatalf("create %s: %v", p, code)
		}
	}
	for range 3 {
		if _, code := c.create("/app/q/item-", []byte("x"), 2 /* sequential */); code != 0 {
			t.Fatalf("sequential create: %v", code)
		}
	}
	if _, code := c.create("/app/eph", nil, 1 /* ephemeral */); code != 0 {
		t.Fatalf("ephemeral: %v", code)
	}
	h, _ := c.call(wire.OpCreate, &wire.CreateRequest{Path: "/locked", Data: []byte("secret"), ACL: digestACL})
	if h.Err != 0 {
		t.Fatalf("create /locked: %v", h.Err)
	}
	for i := range 2 {
		h, _ := c.call(wire.OpSetData, &wire.SetDataRequest{Path: "/app/cfg", Data: []byte{byte(i)}, Version: -1})
		if h.Err != 0 {
			t.Fatalf("setData: %v", h.Err)
		}
	}
}

func snapshotBytes(t *testing.T, s *Server) ([]byte, int64) {
	t.Helper()
	path, zxid, err := s.WriteSnapshotFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, zxid
}

// TestRestoreFromAnotherServer snapshots one server, restores the stream
// into another with a different tree and a longer history, and reads back
// the same tree (paths, data, stats, ACLs) and sessions; a restart keeps
// it.
func TestRestoreFromAnotherServer(t *testing.T) {
	a := startServer(t, Options{})
	fillTree(t, dial(t, a.addr))
	want := dumpTree(a.Server)
	snapData, snapZxid := snapshotBytes(t, a.Server)
	wantSessions := a.tree.Sessions()

	dir := t.TempDir()
	b := startServer(t, Options{DataDir: dir})
	cb := dial(t, b.addr)
	for i := range 20 { // b's history goes further than a's
		if _, code := cb.create("/old-"+string(rune('a'+i)), nil, 0); code != 0 {
			t.Fatal(code)
		}
	}
	before := b.LastZxid()
	if before <= snapZxid {
		t.Fatalf("setup: b at %#x, snapshot at %#x", before, snapZxid)
	}

	z, err := b.RestoreSnapshot(bytes.NewReader(snapData))
	if err != nil {
		t.Fatal(err)
	}
	if z != before+1 || b.LastZxid() != z {
		t.Errorf("restored at %#x (LastZxid %#x), want %#x: after b's last zxid", z, b.LastZxid(), before+1)
	}
	sameTrees(t, want, dumpTree(b.Server), nil)
	if got := b.tree.Sessions(); !maps.Equal(got, wantSessions) {
		t.Errorf("sessions %v, want the snapshot's %v", got, wantSessions)
	}
	// cb's session is not in the snapshot: its connection was closed.
	cb.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := cb.nc.Read(make([]byte, 1)); err == nil {
		t.Error("the connection of a session the snapshot lacks stays open")
	}
	// Writes go on after the restored zxid.
	c2 := dial(t, b.addr)
	if _, code := c2.create("/after", []byte("1"), 0); code != 0 {
		t.Fatal(code)
	}
	if b.LastZxid() <= z {
		t.Errorf("write after the restore at %#x, not after %#x", b.LastZxid(), z)
	}
	afterWrite := dumpTree(b.Server)

	// A restart comes back to the restored tree plus the write after it.
	b.stop(t)
	b2 := startServer(t, Options{DataDir: dir})
	sameTrees(t, afterWrite, dumpTree(b2.Server), nil)
}

// TestRestoreOwnSnapshotFiresWatches rolls a server back to its own
// earlier snapshot: a session in the snapshot keeps its connection, and
// its watches on paths the rollback changed fire.
func TestRestoreOwnSnapshotFiresWatches(t *testing.T) {
	s := startServer(t, Options{})
	c := dial(t, s.addr)
	if _, code := c.create("/keep", []byte("1"), 0); code != 0 {
		t.Fatal(code)
	}
	snapData, _ := snapshotBytes(t, s.Server)
	if _, code := c.create("/later", nil, 0); code != 0 {
		t.Fatal(code)
	}
	// A data watch on /later (deleted by the rollback) and on /keep
	// (unchanged: no event).
	for _, p := range []string{"/later", "/keep"} {
		if h, _ := c.call(wire.OpGetData, &wire.PathWatchRequest{Path: p, Watch: true}); h.Err != 0 {
			t.Fatal(h.Err)
		}
	}
	if _, err := s.RestoreSnapshot(bytes.NewReader(snapData)); err != nil {
		t.Fatal(err)
	}
	if _, code := c.get("/later"); code != wire.CodeNoNode {
		t.Errorf("/later after the rollback: %v, want NoNode", code)
	}
	var evs []wire.WatcherEvent
	for _, ev := range c.events {
		evs = append(evs, wire.WatcherEvent{Type: ev.Type, Path: ev.Path})
	}
	if len(evs) != 1 || evs[0].Type != wire.EventNodeDeleted || evs[0].Path != "/later" {
		t.Errorf("events %+v, want one NodeDeleted on /later", evs)
	}
}

// TestRestoreRefusesBadStreams: truncated, corrupted, foreign and empty
// streams are refused with ErrBadSnapshot and the tree is unchanged.
func TestRestoreRefusesBadStreams(t *testing.T) {
	a := startServer(t, Options{})
	fillTree(t, dial(t, a.addr))
	good, _ := snapshotBytes(t, a.Server)

	b := startServer(t, Options{})
	if _, code := dial(t, b.addr).create("/mine", []byte("keep me"), 0); code != 0 {
		t.Fatal(code)
	}
	want, wantZxid := dumpTree(b.Server), b.LastZxid()
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	zk, err := os.ReadFile(filepath.Join("..", "zkfmt", "testdata", "zk393", "version-2", "snapshot.a5"))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"truncated":            good[:len(good)*2/3],
		"last byte cut":        good[:len(good)-1],
		"a bit flipped":        flipped,
		"not a snapshot":       []byte("hello, this is not a snapshot"),
		"empty":                nil,
		"zookeeper, truncated": zk[:len(zk)-20],
	} {
		_, err := b.RestoreSnapshot(bytes.NewReader(in))
		if !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%s: %v, want ErrBadSnapshot", name, err)
		}
		if b.LastZxid() != wantZxid {
			t.Errorf("%s: zxid moved to %#x", name, b.LastZxid())
		}
		sameTrees(t, want, dumpTree(b.Server), nil)
	}
	if _, code := dial(t, b.addr).create("/still-writable", nil, 0); code != 0 {
		t.Errorf("write after refused restores: %v", code)
	}
}

// TestRestoreZooKeeperSnapshot restores a snapshot Apache ZooKeeper 3.9.3
// wrote: the tree is ZooKeeper's, at its zxid.
func TestRestoreZooKeeperSnapshot(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "zkfmt", "testdata", "zk393", "version-2", "snapshot.a5"))
	if err != nil {
		t.Fatal(err)
	}
	zs, err := zkfmt.DecodeSnapshot(bytes.NewReader(raw))
	if err != nil || !zs.HasLastZxid {
		t.Fatalf("fixture: %v (last zxid recorded: %v)", err, zs != nil && zs.HasLastZxid)
	}
	s := startServer(t, Options{})
	z, err := s.RestoreSnapshot(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if z != zs.LastZxid {
		t.Errorf("restored at %#x, want the snapshot's %#x", z, zs.LastZxid)
	}
	got := dumpTree(s.Server)
	for _, n := range zs.Nodes {
		p := n.Path
		if p == "" {
			p = "/"
		}
		g, ok := got[p]
		if !ok {
			t.Errorf("%s missing", p)
			continue
		}
		if !bytes.Equal(g.data, n.Data) || g.stat.Mzxid != n.Stat.Mzxid || g.stat.Version != n.Stat.Version {
			t.Errorf("%s: %q mzxid %#x v%d, want %q %#x v%d", p, g.data, g.stat.Mzxid, g.stat.Version, n.Data, n.Stat.Mzxid, n.Stat.Version)
		}
	}
}

func TestRestoreRefusedOnEnsembleMember(t *testing.T) {
	e := startEnsemble(t, 1, nil)
	e.waitLeader()
	_, err := e.servers[0].RestoreSnapshot(bytes.NewReader([]byte("CTRE")))
	if !errors.Is(err, ErrRestoreEnsemble) {
		t.Errorf("ensemble member: %v, want ErrRestoreEnsemble", err)
	}
}

// TestRestoreUnderWrites restores while clients pipeline writes to a node
// the snapshot has: the writes in flight are applied before the swap or
// fail (their sessions are not in the snapshot), none lands on the
// restored tree, which equals the snapshot's exactly.
func TestRestoreUnderWrites(t *testing.T) {
	s := startServer(t, Options{})
	c := dial(t, s.addr)
	if _, code := c.create("/base", []byte("b"), 0); code != 0 {
		t.Fatal(code)
	}
	snapData, _ := snapshotBytes(t, s.Server)
	want := dumpTree(s.Server)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var created atomic.Int64
	for w := range 3 {
		cl, err := client.Connect(ctx, []string{s.addr}, client.SessionTimeout(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3000 && ctx.Err() == nil; i += 32 {
				var fs []*client.Future[client.Stat]
				for j := range 32 {
					fs = append(fs, cl.SetAsync("/base", fmt.Appendf(nil, "w%d-%d", w, i+j), -1))
				}
				failed := false
				for _, f := range fs {
					if _, err := f.Wait(ctx); err != nil {
						failed = true
					} else {
						created.Add(1)
					}
				}
				if failed {
					return
				}
			}
		}()
	}
	testutil.Eventually(t, 10*time.Second, "writes under way", func() bool { return created.Load() >= 200 })
	if _, err := s.RestoreSnapshot(bytes.NewReader(snapData)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	sameTrees(t, want, dumpTree(s.Server), nil)
}
