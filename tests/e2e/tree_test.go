package e2e

import (
	"errors"
	"regexp"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// TestInitialTree checks a fresh server's tree (PROTOCOL §8) before any
// client has written anything.
func TestInitialTree(t *testing.T) {
	srv := env.Start(t)

	// Before any session: Node count counts the root twice (5 for a fresh
	// tree) and nothing has consumed a zxid yet.
	srvr := srv.MustFourLetter("srvr")
	if !regexp.MustCompile(`(?m)^Node count: 5$`).MatchString(srvr) {
		t.Errorf("fresh srvr Node count, want 5:\n%s", srvr)
	}
	if !regexp.MustCompile(`(?m)^Zxid: 0x0$`).MatchString(srvr) {
		t.Errorf("fresh srvr Zxid, want 0x0:\n%s", srvr)
	}

	r := harness.DialSession(t, srv.Addr(), 30000)
	kids, p := r.GetChildren("/", false)
	if p.Err != wire.CodeOK || !slices.Equal(kids, []string{"zookeeper"}) {
		t.Errorf("children of / = %q (err %v), want [zookeeper]", kids, p.Err)
	}
	kids, p = r.GetChildren("/zookeeper", false)
	slices.Sort(kids)
	if p.Err != wire.CodeOK || !slices.Equal(kids, []string{"config", "quota"}) {
		t.Errorf("children of /zookeeper = %q (err %v), want [config quota]", kids, p.Err)
	}
	for _, leaf := range []string{"/zookeeper/config", "/zookeeper/quota"} {
		kids, p = r.GetChildren(leaf, false)
		if p.Err != wire.CodeOK || len(kids) != 0 {
			t.Errorf("children of %s = %q (err %v), want none", leaf, kids, p.Err)
		}
	}

	st, p, _ := r.Exists("/", false)
	if p.Err != wire.CodeOK {
		t.Fatalf("exists /: %v", p.Err)
	}
	want := wire.Stat{Cversion: -1, NumChildren: 1}
	if st != want {
		t.Errorf("root stat = %+v, want %+v", st, want)
	}

	// /zookeeper/config: empty data, read-only ACL, Stat zero except aversion -1.
	data, st, p := r.GetData("/zookeeper/config", false)
	if p.Err != wire.CodeOK || len(data) != 0 {
		t.Errorf("getData /zookeeper/config = %q (err %v), want empty", data, p.Err)
	}
	if want := (wire.Stat{Aversion: -1}); st != want {
		t.Errorf("/zookeeper/config stat = %+v, want %+v", st, want)
	}
	acl, _, p := r.GetACL("/zookeeper/config")
	if p.Err != wire.CodeOK || !slices.Equal(acl, wire.ReadACLUnsafe) {
		t.Errorf("ACL of /zookeeper/config = %+v (err %v), want %+v", acl, p.Err, wire.ReadACLUnsafe)
	}
	acl, _, p = r.GetACL("/zookeeper")
	if p.Err != wire.CodeOK || !slices.Equal(acl, wire.OpenACLUnsafe) {
		t.Errorf("ACL of /zookeeper = %+v (err %v), want %+v", acl, p.Err, wire.OpenACLUnsafe)
	}

	// The system nodes cannot be deleted; /zookeeper/config is read-only.
	for _, path := range []string{"/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"} {
		p, _ := r.Call(wire.OpDelete, harness.PathIntBody(path, -1))
		if p.Err != wire.CodeBadArguments {
			t.Errorf("delete %s: err %v, want %v", path, p.Err, wire.CodeBadArguments)
		}
	}
	if _, p := r.SetData("/zookeeper/config", []byte("x"), -1); p.Err != wire.CodeNoAuth {
		t.Errorf("setData /zookeeper/config: err %v, want %v", p.Err, wire.CodeNoAuth)
	}
	// Children may be created under /zookeeper.
	if _, _, p := r.Create2("/zookeeper/e2e", nil, wire.OpenACLUnsafe, 0); p.Err != wire.CodeOK {
		t.Errorf("create /zookeeper/e2e: %v", p.Err)
	}
}

// TestReconfigAndConfig: a standalone server without reconfigEnabled
// refuses reconfig, and getConfig is a read of /zookeeper/config.
func TestReconfigAndConfig(t *testing.T) {
	srv := env.Start(t)
	c, _ := connect(t, srv)

	_, err := c.IncrementalReconfig([]string{"server.2=127.0.0.1:2888:3888;2181"}, nil, -1)
	if !errors.Is(err, zk.ErrReconfigDisabled) {
		t.Errorf("IncrementalReconfig: err = %v, want %v", err, zk.ErrReconfigDisabled)
	}
	_, err = c.Reconfig([]string{"server.1=127.0.0.1:2888:3888;2181"}, -1)
	if !errors.Is(err, zk.ErrReconfigDisabled) {
		t.Errorf("Reconfig: err = %v, want %v", err, zk.ErrReconfigDisabled)
	}

	r := harness.DialSession(t, srv.Addr(), 30000)
	p, _ := r.Call(wire.OpReconfig, harness.ReconfigBody("", "", "server.1=127.0.0.1:2888:3888;2181", -1))
	if p.Err != wire.CodeReconfigDisabled || len(p.Body) != 0 {
		t.Errorf("raw reconfig: err %v body %d bytes, want %v and an empty body", p.Err, len(p.Body), wire.CodeReconfigDisabled)
	}

	// getConfig (the Java client's ZooKeeper.getConfig) is getData on
	// /zookeeper/config, usually with a watch (Curator's EnsembleTracker).
	data, st, _, err := c.GetW("/zookeeper/config")
	if err != nil {
		t.Fatalf("get /zookeeper/config: %v", err)
	}
	if len(data) != 0 || st.Version != 0 {
		t.Errorf("/zookeeper/config = %q version %d, want empty, version 0", data, st.Version)
	}
}
