package migrate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/snap"
	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/vfs"
)

var (
	zkEnv, corralEnv *harness.Env
	nodesFlag        = flag.Int("migrate.nodes", 2500, "approximate number of znodes the test writes to ZooKeeper")
	keepFlag         = flag.String("migrate.keep", "", "copy ZooKeeper's dataDir here before the import (to make fixtures)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	// The test drives both servers, whatever CORRAL_E2E_TARGET says.
	target := os.Getenv(harness.EnvTarget)
	os.Setenv(harness.EnvTarget, string(harness.ZooKeeper))
	zkEnv, _ = harness.NewEnv()
	os.Setenv(harness.EnvTarget, string(harness.Corral))
	var cleanup func()
	corralEnv, cleanup = harness.NewEnv()
	os.Setenv(harness.EnvTarget, target)
	code := m.Run()
	cleanup()
	os.Exit(code)
}

type logger struct{ t testing.TB }

func (l logger) Printf(string, ...any) {}

func connect(t *testing.T, s *harness.Server) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect([]string{s.Addr()}, 10*time.Second, zk.WithLogger(logger{t}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for c.State() != zk.StateHasSession {
		select {
		case <-ev:
		case <-deadline:
			t.Fatalf("no session with %s", s.Addr())
		}
	}
	// The super user reads every node whatever its ACL.
	if err := c.AddAuth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)); err != nil {
		t.Fatal(err)
	}
	return c
}

// node is what a client reads of one znode.
type node struct {
	data []byte
	null bool
	stat zk.Stat
	acl  []zk.ACL
}

func (n node) String() string {
	return fmt.Sprintf("data=%q null=%v stat=%+v acl=%v", n.data, n.null, n.stat, n.acl)
}

func equalNode(a, b node) bool {
	return bytes.Equal(a.data, b.data) && a.null == b.null && a.stat == b.stat && slices.Equal(a.acl, b.acl)
}

// readTree reads every node below "/" with a few concurrent workers.
func readTree(t *testing.T, c *zk.Conn) map[string]node {
	t.Helper()
	out := make(map[string]node)
	var mu sync.Mutex
	var errs []error
	level := []string{"/"}
	for len(level) > 0 {
		var next []string
		var wg sync.WaitGroup
		work := make(chan string)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for p := range work {
					data, st, err := c.Get(p)
					var acl []zk.ACL
					var kids []string
					if err == nil {
						acl, _, err = c.GetACL(p)
					}
					if err == nil {
						kids, _, err = c.Children(p)
					}
					mu.Lock()
					if err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", p, err))
					} else {
						out[p] = node{data: data, null: data == nil, stat: *st, acl: acl}
						for _, k := range kids {
							next = append(next, strings.TrimSuffix(p, "/")+"/"+k)
						}
					}
					mu.Unlock()
				}
			}()
		}
		for _, p := range level {
			work <- p
		}
		close(work)
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("reading the tree: %v", errs[:min(len(errs), 5)])
		}
		level = next
	}
	return out
}

func compareTrees(t *testing.T, what string, want, got map[string]node) {
	t.Helper()
	var bad []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: missing", p))
		case !equalNode(w, g):
			bad = append(bad, fmt.Sprintf("%s:\n  want %v\n  got  %v", p, w, g))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			bad = append(bad, fmt.Sprintf("%s: unexpected", p))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Fatalf("%s: %d of %d nodes differ, first ones:\n%s", what, len(bad), len(want), strings.Join(bad[:min(len(bad), 10)], "\n"))
	}
	t.Logf("%s: %d nodes identical (data, stat, ACL)", what, len(want))
}

// parallel runs n jobs on 8 workers and fails the test on the first error.
func parallel(t *testing.T, n int, job func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	ch := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if err := job(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

var (
	world    = zk.WorldACL(zk.PermAll)
	readOnly = zk.WorldACL(zk.PermRead)
	digest   = append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.ACL{Perms: zk.PermRead, Scheme: "ip", ID: "127.0.0.1"})
)

// writeWorkload writes the tree the test migrates: nested nodes with data
// of several sizes (and null data), three kinds of ACL, sequential nodes
// partly deleted (so cversion and the sequence counter differ from the
// child count), updated data and ACLs (versions, aversions), a multi,
// ephemerals of a session that then closes, a container and a TTL node.
func writeWorkload(t *testing.T, c *zk.Conn, s *harness.Server, prefix string, n int) {
	t.Helper()
	must := func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(prefix, []byte("top"), 0, world))
	const fan = 25
	dirs := max(n/(fan+2), 3)
	parallel(t, dirs, func(i int) error {
		d := fmt.Sprintf("%s/d%03d", prefix, i)
		acl := world
		switch i % 3 {
		case 1:
			acl = digest
		case 2:
			acl = readOnly
		}
		if _, err := c.Create(d, []byte(strings.Repeat("x", i%200)), 0, world); err != nil {
			return err
		}
		for j := 0; j < fan; j++ {
			var data []byte
			if j%5 != 0 { // every fifth has null data
				data = []byte(fmt.Sprintf("%s-%d", d, j))
			}
			if _, err := c.Create(fmt.Sprintf("%s/n%02d", d, j), data, 0, acl); err != nil {
				return err
			}
		}
		// Sequential children, some deleted.
		for j := 0; j < 3; j++ {
			p, err := c.Create(d+"/seq-", []byte{byte(j)}, zk.FlagSequence, world)
			if err != nil {
				return err
			}
			if j == 1 {
				if err := c.Delete(p, -1); err != nil {
					return err
				}
			}
		}
		// Updates: versions and aversions.
		for v := 0; v < i%4; v++ {
			if _, err := c.Set(d, []byte(fmt.Sprintf("v%d", v)), -1); err != nil {
				return err
			}
		}
		if i%7 == 0 {
			if _, err := c.SetACL(d, readOnly, -1); err != nil {
				return err
			}
		}
		if i%11 == 0 {
			if err := c.Delete(fmt.Sprintf("%s/n%02d", d, fan-1), -1); err != nil {
				return err
			}
		}
		return nil
	})
	// A deeper chain and an empty (not null) value.
	p := prefix
	for i := 0; i < 12; i++ {
		p += fmt.Sprintf("/deep%d", i)
		must(c.Create(p, []byte{}, 0, world))
	}
	// A multi.
	if _, err := c.Multi(
		&zk.CreateRequest{Path: prefix + "/multi", Data: []byte("m"), Acl: world},
		&zk.CreateRequest{Path: prefix + "/multi/a", Data: []byte("a"), Acl: digest},
		&zk.SetDataRequest{Path: prefix + "/multi", Data: []byte("m2"), Version: 0},
	); err != nil {
		t.Fatal(err)
	}
	// A container with a child and a TTL node (an hour: never reaped here).
	must(c.CreateContainer(prefix+"/container", []byte("c"), zk.FlagContainer, world))
	must(c.Create(prefix+"/container/child", nil, 0, world))
	must(c.CreateTTL(prefix+"/ttl", []byte("t"), zk.FlagTTL, world, time.Hour))
	// Ephemerals of a session that closes: its closeSession deletes them.
	c2 := connect(t, s)
	for i := 0; i < 5; i++ {
		must(c2.Create(fmt.Sprintf("%s/eph%d", prefix, i), nil, zk.FlagEphemeral, world))
	}
	c2.Close()
	eventuallyGone(t, c, prefix+"/eph0")
}

func eventuallyGone(t *testing.T, c *zk.Conn, p string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, p+" gone", func() bool {
		ok, _, err := c.Exists(p)
		if err != nil {
			t.Fatal(err)
		}
		return !ok
	})
}

func lastZxid(t *testing.T, s *harness.Server) string {
	t.Helper()
	out := s.MustFourLetter("srvr")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "Zxid: "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Zxid in srvr: %q", out)
	return ""
}

// replaceDataDir empties a stopped server's data directory and fills it
// by running `corral <cmd> -from from -to <its dataDir>`.
func replaceDataDir(t *testing.T, s *harness.Server, cmd, from string) string {
	t.Helper()
	if err := os.RemoveAll(s.DataDir); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(corralEnv.CorralBin(), cmd, "-q", "-from", from, "-to", s.DataDir).CombinedOutput()
	if err != nil {
		t.Fatalf("corral %s: %v\n%s", cmd, err, out)
	}
	t.Logf("corral %s: %s", cmd, out)
	return string(out)
}

func TestImportExportRoundTrip(t *testing.T) {
	n := *nodesFlag
	if testing.Short() {
		n = min(n, 500)
	}
	// snapCount low: ZooKeeper takes several snapshots and rolls its log
	// while the workload runs, so the newest snapshot is fuzzy and the
	// import must replay the log after it.
	zks := zkEnv.StartWith(t, harness.Config{Extra: []string{fmt.Sprintf("snapCount=%d", max(n/4, 100))}})
	c := connect(t, zks)
	writeWorkload(t, c, zks, "/m", n)
	fromZK := readTree(t, c)
	c.Close()
	// After the reader's closeSession: corral must end at the same zxid.
	zkZxid := lastZxid(t, zks)
	zks.Stop()

	// Keep ZooKeeper's files: the snapshot must be followed by logged
	// transactions for the test to cover the replay.
	zkData := filepath.Join(t.TempDir(), "zk")
	if err := os.Rename(zks.DataDir, zkData); err != nil {
		t.Fatal(err)
	}

	if *keepFlag != "" {
		if err := os.CopyFS(*keepFlag, os.DirFS(zkData)); err != nil {
			t.Fatal(err)
		}
	}

	cs := corralEnv.Start(t)
	cs.Stop()
	out := replaceDataDir(t, cs, "import-zookeeper", zkData)
	if strings.Contains(out, " and 0 logged transactions") {
		t.Errorf("import replayed no logged transactions after the snapshot: the workload did not leave a log after it: %s", out)
	}
	cs.StartAgain()
	if got := lastZxid(t, cs); got != zkZxid {
		t.Errorf("corral's zxid after the import = %s, ZooKeeper's was %s", got, zkZxid)
	}
	c = connect(t, cs)
	fromCorral := readTree(t, c)
	compareTrees(t, "ZooKeeper → corral", fromZK, fromCorral)

	// New writes on corral: their zxids follow ZooKeeper's, and the export
	// must take them from corral's log (no snapshot has them yet).
	mustCreate := func(p string, data []byte, flags int32) string {
		t.Helper()
		got, err := c.Create(p, data, flags, world)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	mustCreate("/after", []byte("written on corral"), 0)
	// The next sequential suffix is the parent's child-create counter,
	// which clients see as cversion = 2*counter - numChildren.
	ps := fromZK["/m/d000"].stat
	want := fmt.Sprintf("/m/d000/seq-%010d", (ps.Cversion+ps.NumChildren)/2)
	if seq := mustCreate("/m/d000/seq-", nil, zk.FlagSequence); seq != want {
		t.Errorf("sequential create after import = %s, want %s (ZooKeeper's counter carried over)", seq, want)
	}
	if err := c.Delete("/m/d001/n00", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set("/m/d002", []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	last, err := strconv.ParseInt(strings.TrimPrefix(zkZxid, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("srvr zxid %q: %v", zkZxid, err)
	}
	if _, st, err := c.Get("/after"); err != nil || st.Czxid <= last {
		t.Errorf("czxid of a node created after the import = %#x (err %v), ZooKeeper ended at %s", st.Czxid, err, zkZxid)
	}
	fromCorral = readTree(t, c)
	c.Close()
	cs.Stop()

	replaceDataDir(t, zks, "export-zookeeper", cs.DataDir)
	zks.StartAgain()
	c = connect(t, zks)
	compareTrees(t, "corral → ZooKeeper", fromCorral, readTree(t, c))
}

// TestImportOpenSession: a session still open when ZooKeeper stops (its
// ephemerals alive) is in the imported tree with its timeout, owning its
// ephemerals, so the server started on it expires it as ZooKeeper would.
// The written snapshot is read directly: nothing here waits on a timeout.
func TestImportOpenSession(t *testing.T) {
	zks := zkEnv.Start(t)
	c := connect(t, zks)
	if _, err := c.Create("/eph", []byte("e"), zk.FlagEphemeral, world); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/p", nil, 0, world); err != nil {
		t.Fatal(err)
	}
	sid := c.SessionID()
	zks.Stop() // the session is still open
	c.Close()

	to := filepath.Join(t.TempDir(), "corral")
	out, err := exec.Command(corralEnv.CorralBin(), "import-zookeeper", "-q", "-from", zks.DataDir, "-to", to).CombinedOutput()
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	infos, err := snap.Newest(vfs.OS(), filepath.Join(to, "version-2"))
	if err != nil || len(infos) != 1 {
		t.Fatalf("corral snapshots %v, %v", infos, err)
	}
	r, err := snap.Open(vfs.OS(), filepath.Join(to, "version-2"), infos[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tree, err := datatree.ReadSnapshot(r)
	if err != nil {
		t.Fatal(err)
	}
	if to, ok := tree.SessionTimeout(sid); !ok || to <= 0 {
		t.Fatalf("session %#x not in the imported session table (%v)", sid, tree.Sessions())
	}
	n := tree.Get("/eph")
	if n == nil || n.Persisted().EphemeralOwner != sid || string(n.Data()) != "e" {
		t.Fatalf("/eph = %+v, want an ephemeral of %#x", n, sid)
	}
	if got := tree.Ephemerals(sid); len(got) != 1 || got[0] != "/eph" {
		t.Fatalf("ephemerals of %#x: %v", sid, got)
	}
}
