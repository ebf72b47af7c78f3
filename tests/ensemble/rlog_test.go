package ensemble

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testutil"
)

// TestLogsInTree runs logs inside the ZooKeeper ensemble (rlog.root):
// go-zookeeper's sequential creates of 64 KiB under a log's znode, from
// three writers at once and later one, are
// appends whose payloads go to each member's data log, not its
// transaction log; every member reads every entry back with getData,
// after a follower's SIGKILL and restart, the leader's, and a member
// restarted from an empty disk (which needs the payloads it lacks from
// the leader's snapshot image).
// With -ensemble.long it runs in async durability too.
func TestLogsInTree(t *testing.T) {
	t.Parallel()
	if env.IsZooKeeper() {
		t.Skip("rlog.root is corral's")
	}
	modes := []string{"sync"}
	if *long {
		modes = append(modes, "async")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testLogsInTree(t, mode)
		})
	}
}

func testLogsInTree(t *testing.T, mode string) {
	cfg := ensembleConfig()
	// Snapshots (and so log cuts) every few writes, so that the member
	// restarted from an empty disk is behind the leader's log.
	cfg.Server.Extra = append(cfg.Server.Extra, "rlog.root=/logs", "snapCount=8", "durability="+mode)
	ens := env.StartEnsemble(t, 3, cfg)
	t.Logf("ensemble up at %s, leader %s", ens.ConnectString(), ens.MemberString(ens.WaitAll()))
	rng := newRand(t)

	c := connectAll(t, ens, 0, "writer")
	for _, p := range []string{"/logs", "/logs/a"} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	want := map[string][]byte{}
	var mu sync.Mutex // guards want and rng
	appendN := func(c *zk.Conn, n int) error {
		for i := 0; i < n; i++ {
			size := 64 << 10
			if i%5 == 4 {
				size = 100 // inline: stays in the tree
			}
			b := make([]byte, size)
			mu.Lock()
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			mu.Unlock()
			p, err := c.Create("/logs/a/e-", b, zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				return fmt.Errorf("append: %w", err)
			}
			mu.Lock()
			want[p] = b
			mu.Unlock()
		}
		return nil
	}
	readAll := func(i int) {
		t.Helper()
		cl := connectOne(t, ens, i)
		// The member may be behind the writer's: sync first.
		if _, err := cl.Sync("/logs/a"); err != nil {
			t.Fatalf("%s: sync: %v", ens.MemberString(i), err)
		}
		kids, _, err := cl.Children("/logs/a")
		if err != nil {
			t.Fatalf("%s: children: %v", ens.MemberString(i), err)
		}
		if len(kids) != len(want) {
			t.Fatalf("%s: %d entries, want %d", ens.MemberString(i), len(kids), len(want))
		}
		for p, w := range want {
			got, st, err := cl.Get(p)
			if err != nil {
				t.Fatalf("%s: get %s: %v", ens.MemberString(i), p, err)
			}
			if !bytes.Equal(got, w) || int(st.DataLength) != len(w) {
				t.Fatalf("%s: get %s: %d bytes (stat %d), want %d bytes, equal=%v",
					ens.MemberString(i), p, len(got), st.DataLength, len(w), bytes.Equal(got, w))
			}
			ok, st, err := cl.Exists(p)
			if err != nil || !ok || int(st.DataLength) != len(w) {
				t.Fatalf("%s: exists %s: %v %v, dataLength %d, want %d", ens.MemberString(i), p, ok, err, st.DataLength, len(w))
			}
		}
		cl.Close()
	}
	// Three writers, one through each member.
	var wg sync.WaitGroup
	errs := make([]error, ens.Len())
	for i := 0; i < ens.Len(); i++ {
		cw := c
		if i > 0 {
			cw = connectOne(t, ens, i)
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = appendN(cw, 10) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < ens.Len(); i++ {
		readAll(i)
	}
	// Client data that looks like a reference is refused under a log.
	if _, err := c.Create("/logs/a/fake", append([]byte{0, 'z', 'k', 'r', 'l', 'o', 'g', 1}, make([]byte, 16)...), 0, zk.WorldACL(zk.PermAll)); err != zk.ErrBadArguments {
		t.Fatalf("create with reference-like data: %v, want %v", err, zk.ErrBadArguments)
	}

	// Only references reach the transaction logs; the payloads are in the
	// data logs.
	for i := 0; i < ens.Len(); i++ {
		large, inWAL, inData := countIn(t, ens.Server(i).DataDir, want)
		if large != 24 || inWAL != 0 || inData != large {
			t.Fatalf("%s: of %d large payloads %d found in the transaction log, %d in the data log; want 0 and all",
				ens.MemberString(i), large, inWAL, inData)
		}
	}

	// Deleted entries are gone; the restarts below release their records
	// (the sweep at open) and must keep every other one.
	deleted := 0
	for p, b := range want {
		if len(b) > 1024 && deleted < 4 {
			if err := c.Delete(p, -1); err != nil {
				t.Fatalf("delete %s: %v", p, err)
			}
			delete(want, p)
			deleted++
		}
	}

	leader := ens.WaitAll()
	f := ens.Followers(leader)[0]
	t.Logf("SIGKILL follower %s, append, restart it", ens.MemberString(f))
	// The writer is connected to the other two: one connected to f could
	// lose its append with the connection (go-zookeeper's "connection
	// closed", an unknown outcome, as with ZooKeeper).
	others := []string{ens.Server(leader).Addr(), ens.Server(ens.Followers(leader)[1]).Addr()}
	cf := connect(t, others, 0, "writer-f")
	ens.Server(f).Kill()
	if err := appendN(cf, 10); err != nil {
		t.Fatal(err)
	}
	ens.Server(f).StartAgain()
	ens.WaitAll()
	readAll(f)

	t.Logf("SIGKILL leader %s, append, restart it", ens.MemberString(leader))
	ens.Server(leader).Kill()
	c2 := connect(t, []string{ens.Server(f).Addr(), ens.Server(ens.Followers(leader)[1]).Addr()}, 0, "writer2")
	if !testutil.Within(progressWait, func() bool {
		_, err := c2.Create("/logs/a/e-", []byte("after the leader's kill"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err == nil {
			return true
		}
		if definite(err) {
			t.Fatalf("append after the leader's kill: %v", err)
		}
		return false
	}) {
		t.Fatalf("no append succeeded within %s of the leader's kill", progressWait)
	}
	// The ambiguous tries may have appended too: take the log's children
	// as they are for the small entries, checking every large one.
	if err := appendN(c2, 5); err != nil {
		t.Fatal(err)
	}
	ens.Server(leader).StartAgain()
	ens.WaitAll()
	adoptSmall(t, c2, want)
	for i := 0; i < ens.Len(); i++ {
		readAll(i)
	}

	w := ens.Followers(ens.WaitAll())[0]
	t.Logf("wipe %s and restart it from an empty disk", ens.MemberString(w))
	ens.Server(w).Stop()
	const installed = "installed the leader's snapshot"
	before := countInLog(t, ens.Server(w).LogPath, installed)
	if err := os.RemoveAll(filepath.Join(ens.Server(w).DataDir, "version-2")); err != nil {
		t.Fatal(err)
	}
	const streamed = "a streamed snapshot arrived whole"
	streamsBefore := countInLog(t, ens.Server(w).LogPath, streamed)
	ens.Server(w).StartAgain()
	ens.WaitAll()
	readAll(w)
	if countInLog(t, ens.Server(w).LogPath, installed) == before {
		t.Fatalf("wiped %s caught up without a snapshot from the leader; the test wants one", ens.MemberString(w))
	}
	// The payloads went ahead of the snapshot, streamed (rlogstream.go).
	if countInLog(t, ens.Server(w).LogPath, streamed) == streamsBefore {
		t.Fatalf("the wiped %s did not log %q", ens.MemberString(w), streamed)
	}
	if large, inWAL, inData := countIn(t, ens.Server(w).DataDir, want); inWAL != 0 || inData != large {
		t.Fatalf("wiped %s: of %d large payloads %d in the transaction log, %d in the data log; want 0 and all",
			ens.MemberString(w), large, inWAL, inData)
	}
}

// adoptSmall adds to want the log's small entries it does not know (the
// retried appends whose first try may have committed).
func adoptSmall(t *testing.T, c *zk.Conn, want map[string][]byte) {
	t.Helper()
	kids, _, err := c.Children("/logs/a")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		p := "/logs/a/" + k
		if _, ok := want[p]; ok {
			continue
		}
		b, _, err := c.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 1024 {
			t.Fatalf("%s: an unexpected large entry", p)
		}
		want[p] = b
	}
}

// countIn counts the large payloads of want found in the transaction log
// files (version-2/log.*) and in the data log (version-2/rlog/data.*) of
// a member's data directory, looking for a 256-byte piece of each.
func countIn(t *testing.T, dataDir string, want map[string][]byte) (large, inWAL, inData int) {
	t.Helper()
	read := func(pattern string) []byte {
		names, err := filepath.Glob(filepath.Join(dataDir, "version-2", pattern))
		if err != nil {
			t.Fatal(err)
		}
		var all []byte
		for _, n := range names {
			if strings.HasSuffix(n, ".tmp") {
				continue
			}
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	}
	wal, data := read("log.*"), read(filepath.Join("rlog", "data.*"))
	if len(wal) == 0 {
		t.Fatalf("no transaction log under %s", dataDir)
	}
	for _, b := range want {
		if len(b) <= 1024 {
			continue
		}
		large++
		piece := b[1000:1256]
		if bytes.Contains(wal, piece) {
			inWAL++
		}
		if bytes.Contains(data, piece) {
			inData++
		}
	}
	return large, inWAL, inData
}

// countInLog counts the lines of a server's log that contain s.
func countInLog(t *testing.T, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), s)
}

// TestLogsCompactSparse: with small data-log segments, a log whose
// entries are all deleted beside a log that keeps every entry leaves each
// member's segments sparse; once the snapshots kept cover the deletes,
// the purge releases the records and compacts the sparse segments (each
// member's log says so and it holds fewer segment files), and every kept
// entry reads back with its bytes on every member, also after each
// member's SIGKILL and restart.
func TestLogsCompactSparse(t *testing.T) {
	t.Parallel()
	if env.IsZooKeeper() {
		t.Skip("rlog.root is corral's")
	}
	cfg := ensembleConfig()
	cfg.Server.Extra = append(cfg.Server.Extra, "rlog.root=/logs", "rlog.segmentSize=128K",
		"snapCount=8", "PurgeTime=100", "NumberToRetain=3")
	ens := env.StartEnsemble(t, 3, cfg)
	ens.WaitAll()
	c := connectAll(t, ens, 0, "writer")
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/logs", "/logs/keep", "/logs/trim"} {
		if _, err := c.Create(p, nil, 0, acl); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	rng := newRand(t)
	want := map[string][]byte{}
	var trim []string
	for i := 0; i < 96; i++ {
		b := make([]byte, 6<<10)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		parent := "/logs/trim"
		if i%4 == 0 {
			parent = "/logs/keep"
		}
		p, err := c.Create(parent+"/e-", b, zk.FlagSequence, acl)
		if err != nil {
			t.Fatalf("append to %s: %v", parent, err)
		}
		if parent == "/logs/keep" {
			want[p] = b
		} else {
			trim = append(trim, p)
		}
	}
	segments := func(i int) int {
		names, err := filepath.Glob(filepath.Join(ens.Server(i).DataDir, "version-2", "rlog", "data.[0-9a-f]*"))
		if err != nil {
			t.Fatal(err)
		}
		return len(names)
	}
	before := make([]int, ens.Len())
	for i := range before {
		before[i] = segments(i)
	}
	for _, p := range trim {
		if err := c.Delete(p, -1); err != nil {
			t.Fatalf("delete %s: %v", p, err)
		}
	}
	// Writes after the deletes roll snapshots (snapCount) until the
	// oldest one kept covers them and the purge releases the records.
	const compacted = "compacted sparse rlog data-log segments"
	if !testutil.Within(progressWait, func() bool {
		if _, err := c.Create("/tick-", nil, zk.FlagSequence, acl); err != nil {
			t.Fatalf("tick: %v", err)
		}
		for i := 0; i < ens.Len(); i++ {
			if countInLog(t, ens.Server(i).LogPath, compacted) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("not every member compacted its data log within %s", progressWait)
	}
	for i := 0; i < ens.Len(); i++ {
		if n := segments(i); n >= before[i] {
			t.Errorf("%s: %d segment files, %d before the deletes", ens.MemberString(i), n, before[i])
		}
		t.Logf("%s: %d segment files, %d before the deletes", ens.MemberString(i), segments(i), before[i])
	}
	readKeep := func(i int) {
		t.Helper()
		cl := connectOne(t, ens, i)
		defer cl.Close()
		if _, err := cl.Sync("/logs/keep"); err != nil {
			t.Fatalf("%s: sync: %v", ens.MemberString(i), err)
		}
		kids, _, err := cl.Children("/logs/keep")
		if err != nil || len(kids) != len(want) {
			t.Fatalf("%s: %d entries (%v), want %d", ens.MemberString(i), len(kids), err, len(want))
		}
		for p, w := range want {
			got, _, err := cl.Get(p)
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("%s: get %s: %d bytes, %v; want %d bytes", ens.MemberString(i), p, len(got), err, len(w))
			}
		}
	}
	for i := 0; i < ens.Len(); i++ {
		readKeep(i)
	}
	for i := 0; i < ens.Len(); i++ {
		t.Logf("SIGKILL %s and restart it", ens.MemberString(i))
		ens.Server(i).Kill()
		ens.Server(i).StartAgain()
		ens.WaitAll()
		readKeep(i)
	}
}
