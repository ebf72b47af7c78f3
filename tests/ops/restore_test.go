package ops

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/tests/harness"
)

// startCorralWithAdmin starts a corral server with its AdminServer.
func startCorralWithAdmin(t *testing.T, name string) *adminTarget {
	t.Helper()
	port := testport.Free(t)
	srv := env.StartWith(t, harness.Config{Extra: []string{
		"admin.enableServer=true",
		"admin.serverAddress=127.0.0.1",
		"admin.serverPort=" + strconv.Itoa(port),
	}})
	return &adminTarget{name: name, srv: srv, base: fmt.Sprintf("http://127.0.0.1:%d/commands", port)}
}

// superConn is a client authenticated as the super user, which reads
// every node whatever its ACL.
func superConn(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c := connect(t, addr)
	if err := c.AddAuth("digest", []byte(harness.SuperUser+":"+harness.SuperPassword)); err != nil {
		t.Fatal(err)
	}
	return c
}

// readTree reads every node under "/" but /zookeeper: data, stat and ACL.
func readTree(t *testing.T, c *zk.Conn) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		if p == "/zookeeper" {
			return
		}
		data, st, err := c.Get(p)
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		acl, _, err := c.GetACL(p)
		if err != nil {
			t.Fatalf("getACL %s: %v", p, err)
		}
		out[p] = fmt.Sprintf("%q %+v %v", data, *st, acl)
		kids, _, err := c.Children(p)
		if err != nil {
			t.Fatalf("children %s: %v", p, err)
		}
		slices.Sort(kids)
		for _, k := range kids {
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk("/")
	return out
}

// TestRestoreBetweenCorralServers snapshots one corral server through its
// AdminServer and restores the stream into another: the second then reads
// back the first's tree (paths, data, stats, ACLs). Restore needs an
// authorized user, is rate-limited, and a corrupt stream is refused with
// the tree intact.
func TestRestoreBetweenCorralServers(t *testing.T) {
	if env.Kind != harness.Corral {
		t.Skip("corral's restore")
	}
	env.Require(t)
	auth := http.Header{"Authorization": {"digest " + harness.SuperUser + ":" + harness.SuperPassword}}

	src := startCorralWithAdmin(t, "source")
	ca := superConn(t, src.srv.Addr())
	digest := zk.DigestACL(zk.PermRead|zk.PermAdmin, "user", "pw")
	for _, n := range []struct {
		path string
		acl  []zk.ACL
		flag int32
	}{
		{"/svc", zk.WorldACL(zk.PermAll), 0},
		{"/svc/cfg", zk.WorldACL(zk.PermAll), 0},
		{"/svc/locked", digest, 0},
		{"/svc/q", zk.WorldACL(zk.PermRead | zk.PermCreate), 0},
	} {
		if _, err := ca.Create(n.path, []byte("data of "+n.path), n.flag, n.acl); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := ca.Create("/svc/q/job-", []byte("j"), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ca.Set("/svc/cfg", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, ca)
	status, _, snapshot := src.get(t, "/snapshot", auth)
	if status != http.StatusOK || len(snapshot) == 0 {
		t.Fatalf("snapshot: %d, %d bytes", status, len(snapshot))
	}

	dst := startCorralWithAdmin(t, "target")
	cb := connect(t, dst.srv.Addr())
	if _, err := cb.Create("/old", []byte("replaced"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// Restore asks for ALL on "/" (ZooKeeper's AuthRequest), which
	// ZooKeeper's checkACL grants to an identity holding any permission
	// there (perms & ALL != 0): the target's root names user:pw, and
	// other:pw is refused (the super user, as always, may).
	rootACL := zk.DigestACL(zk.PermRead, "user", "pw")
	if _, err := cb.SetACL("/", rootACL, -1); err != nil {
		t.Fatal(err)
	}
	if st, _ := dst.post(t, "/restore", http.Header{}, snapshot); st != http.StatusUnauthorized {
		t.Errorf("restore without auth: %d, want 401", st)
	}
	if st, _ := dst.post(t, "/restore", http.Header{"Authorization": {"digest other:pw"}}, snapshot); st != http.StatusForbidden {
		t.Errorf("restore by a user without a permission on /: %d, want 403", st)
	}
	st, body := dst.post(t, "/restore", auth, snapshot)
	m := decode(t, "corral", body)
	if st != http.StatusOK || m["error"] != nil || m["command"] != "restore" || m["last_zxid"] == nil {
		t.Fatalf("restore: %d %s", st, body)
	}
	if got := readTree(t, superConn(t, dst.srv.Addr())); !equalTrees(t, want, got) {
		t.Error("the restored tree differs from the source's")
	}
	if st, _ := dst.post(t, "/restore", auth, snapshot); st != http.StatusTooManyRequests {
		t.Errorf("second restore at once: %d, want 429", st)
	}

	// A corrupt stream is refused and loses nothing.
	third := startCorralWithAdmin(t, "corrupt")
	cc := superConn(t, third.srv.Addr())
	if _, err := cc.Create("/mine", []byte("keep"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, cc)
	st, body = third.post(t, "/restore", auth, snapshot[:len(snapshot)/2])
	m = decode(t, "corral", body)
	if e, _ := m["error"].(string); st != http.StatusInternalServerError || e == "" {
		t.Errorf("truncated stream: %d %s", st, body)
	}
	if after := readTree(t, cc); !equalTrees(t, before, after) {
		t.Error("a refused restore changed the tree")
	}
}

func equalTrees(t *testing.T, want, got map[string]string) bool {
	t.Helper()
	ok := true
	for p, w := range want {
		if g, found := got[p]; !found || g != w {
			t.Errorf("%s:\nwant %s\ngot  %s", p, w, g)
			ok = false
		}
	}
	for p := range got {
		if _, found := want[p]; !found {
			t.Errorf("%s: not in the snapshot", p)
			ok = false
		}
	}
	return ok
}
