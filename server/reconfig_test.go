package server

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
	"github.com/corral-db/corral/zab"
)

func threeServers(t *testing.T) []config.Server {
	t.Helper()
	s, _, _, err := config.ParseDynamic("server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n" +
		"server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\nserver.3=127.0.0.1:2890:3890:participant;127.0.0.1:2183")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(ss []config.Server) []int64 {
	var out []int64
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

// TestNextConfig: the incremental and bulk forms and the error codes
// ZooKeeper's PrepRequestProcessor gives for bad specs.
func TestNextConfig(t *testing.T) {
	cur := threeServers(t)
	ok := []struct {
		rr   wire.ReconfigRequest
		want []int64
	}{
		{wire.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2891:3891:participant;2184"}, []int64{1, 2, 3, 4}},
		{wire.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2891:3891;2184, server.5=127.0.0.1:2892:3892:observer;2185",
			LeavingServers: "1 , 2"}, []int64{3, 4, 5}},
		// A joiner that is already a member replaces its line.
		{wire.ReconfigRequest{JoiningServers: "server.3=127.0.0.1:2890:3890:observer;2183"}, []int64{1, 2, 3}},
		{wire.ReconfigRequest{LeavingServers: "7"}, []int64{1, 2, 3}},
		// Ids beyond corral's own myid range, as ZooKeeper accepts them.
		{wire.ReconfigRequest{JoiningServers: "server.999=0.0.0.0:1234:2345:observer;3456"}, []int64{1, 2, 3, 999}},
		{wire.ReconfigRequest{NewMembers: "server.1=127.0.0.1:2888:3888;2181,server.9=127.0.0.1:2899:3899;2189"}, []int64{1, 9}},
	}
	for _, c := range ok {
		got, err := nextConfig(cur, &c.rr)
		if err != nil || !slices.Equal(ids(got), c.want) {
			t.Errorf("%+v: got %v %v, want %v", c.rr, ids(got), err, c.want)
		}
	}
	bad := []struct {
		rr   wire.ReconfigRequest
		want wire.Code
	}{
		{wire.ReconfigRequest{LeavingServers: "one"}, wire.CodeMarshallingError},
		{wire.ReconfigRequest{JoiningServers: "server.x=127.0.0.1:2891:3891;2184"}, wire.CodeMarshallingError},
		{wire.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2891:3891"}, wire.CodeBadArguments}, // no client port
		{wire.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2891;2184"}, wire.CodeBadArguments},
		{wire.ReconfigRequest{JoiningServers: "server.4"}, wire.CodeBadArguments},
		{wire.ReconfigRequest{JoiningServers: "some thing"}, wire.CodeBadArguments},                        // kazoo's test_bad_input
		{wire.ReconfigRequest{JoiningServers: "server.4=127.0.0.1:2888:3891;2184"}, wire.CodeBadArguments}, // 1's quorum port
		{wire.ReconfigRequest{NewMembers: "server.1=127.0.0.1:2888:3888"}, wire.CodeBadArguments},
		{wire.ReconfigRequest{NewMembers: "server.1=127.0.0.1:2888:3888;1,tickTime=5"}, wire.CodeBadArguments},
	}
	for _, c := range bad {
		if _, err := nextConfig(cur, &c.rr); !errors.Is(err, c.want) {
			t.Errorf("%+v: got %v, want %v", c.rr, err, c.want)
		}
	}
}

// TestDecodeMembership: zab learns a configuration change from a
// reconfig transaction only.
func TestDecodeMembership(t *testing.T) {
	text := config.FormatQuorumConfig(append(threeServers(t),
		config.Server{ID: 4, Host: "h", QuorumPort: 1, ElectionPort: 2, Observer: true, ClientPort: 3}), 0x100000005)
	rec := txn.Append(nil, &txn.Header{SessionID: 7, Cxid: 1, Zxid: 0x100000005, Time: 1, Type: wire.OpReconfig},
		&txn.Txn{Type: wire.OpReconfig, Path: "/zookeeper/config", Data: []byte(text), Version: -1})
	m, ok := decodeMembership(rec)
	if !ok || !slices.Equal(m.Voters, []uint64{1, 2, 3}) || !slices.Equal(m.Observers, []uint64{4}) {
		t.Fatalf("got %v %v", m, ok)
	}
	set := txn.Append(nil, &txn.Header{SessionID: 7, Cxid: 1, Zxid: 9, Time: 1, Type: wire.OpSetData},
		&txn.Txn{Type: wire.OpSetData, Path: "/zookeeper/config", Data: []byte(text)})
	for _, data := range [][]byte{set, nil, {txn.CodecVersion}, rec[:len(rec)-3]} {
		if _, ok := decodeMembership(data); ok {
			t.Fatalf("%x decoded as a membership change", data)
		}
	}
}

// reconfigEntry is a reconfig transaction at zxid to servers.
func reconfigEntry(servers []config.Server, zxid int64) zab.Entry {
	text := config.FormatQuorumConfig(servers, zxid)
	return zab.Entry{Zxid: zab.Zxid(zxid), Data: txn.Append(nil,
		&txn.Header{SessionID: 7, Cxid: 1, Zxid: zxid, Time: 1, Type: wire.OpReconfig},
		&txn.Txn{Type: wire.OpReconfig, Path: "/zookeeper/config", Data: []byte(text), Version: -1})}
}

// TestDynamicNextFile: a member that accepts a reconfig proposal writes
// zoo.cfg.dynamic.next before it logs it; a member restarted before the
// commit reads it back as the last proposed configuration; the commit
// writes zoo.cfg.dynamic.<version> and removes it (ZooKeeper's
// setLastSeenQuorumVerifier, QuorumPeerConfig.parse, setQuorumVerifier).
func TestDynamicNextFile(t *testing.T) {
	dir := t.TempDir()
	static := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(filepath.Join(dir, "myid"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(static, []byte("tickTime=2000\ndataDir="+dir+"\ninitLimit=5\nsyncLimit=2\nreconfigEnabled=true\n"+
		"server.1=127.0.0.1:2888:3888;2181\nserver.2=127.0.0.1:2889:3889;2182\nserver.3=127.0.0.1:2890:3890;2183\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	member := func() *replica {
		c, _, err := config.Load(static, nil)
		if err != nil {
			t.Fatal(err)
		}
		ens := &Ensemble{ID: 1, Servers: c.Servers, ConfigVersion: c.ConfigVersion, NextConfigVersion: c.NextConfigVersion,
			Config: []byte(c.QuorumConfig()), ConfigFile: static}
		rp := &replica{id: 1, ens: ens, log: slog.New(slog.DiscardHandler)}
		rp.cfg.init(ens)
		return rp
	}
	next := config.NextDynamicFileName(static)
	exists := func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	}
	three := threeServers(t)
	four := append(slices.Clone(three), config.Server{ID: 4, Host: "127.0.0.1", QuorumPort: 2891, ElectionPort: 3891, ClientPort: 2184})
	const v1, v2 = 0x100000002, 0x100000005

	// The first change is accepted (with another entry) and committed.
	rp := member()
	other := zab.Entry{Zxid: v1 - 1, Data: txn.Append(nil, &txn.Header{Zxid: v1 - 1, Type: wire.OpCreate},
		&txn.Txn{Type: wire.OpCreate, Path: "/a"})}
	rp.reconfigAccepted([]zab.Entry{other, reconfigEntry(four, v1)})
	data, err := os.ReadFile(next)
	if err != nil {
		t.Fatalf("no %s after accepting a reconfig: %v", next, err)
	}
	if want := config.FormatQuorumConfig(four, v1); string(data) != want {
		t.Fatalf("%s holds\n%s\nwant\n%s", next, data, want)
	}
	rp.reconfigCommitted([]byte(config.FormatQuorumConfig(four, v1)), v1)
	if exists(next) || !exists(config.DynamicFileName(static, v1)) {
		t.Fatalf("after the commit: next exists %v, dynamic.%x exists %v", exists(next), v1, exists(config.DynamicFileName(static, v1)))
	}

	// The second is accepted; the member stops before it commits. It
	// starts with the committed configuration and the proposed one.
	rp.reconfigAccepted([]zab.Entry{reconfigEntry(three, v2)})
	rp = member()
	if rp.cfg.version != v1 || rp.cfg.next != v2 || len(rp.cfg.servers) != 4 {
		t.Fatalf("restarted with version %x next %x servers %d, want %x %x 4", rp.cfg.version, rp.cfg.next, len(rp.cfg.servers), v1, v2)
	}
	c, _, err := config.Load(static, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.NextConfigVersion != v2 || !slices.Equal(ids(c.NextServers), []int64{1, 2, 3}) {
		t.Fatalf("Load: next version %x servers %v", c.NextConfigVersion, ids(c.NextServers))
	}
	// A commit of an older configuration (replayed from the log) leaves
	// the proposal's file; its own commit replaces it.
	rp.reconfigCommitted([]byte(config.FormatQuorumConfig(four, v1)), v1)
	if !exists(next) {
		t.Fatal("the commit of an older configuration removed the proposal's file")
	}
	rp.reconfigCommitted([]byte(config.FormatQuorumConfig(three, v2)), v2)
	if exists(next) {
		t.Fatal("zoo.cfg.dynamic.next left after its configuration committed")
	}
	c, _, err = config.Load(static, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ConfigVersion != v2 || len(c.Servers) != 3 || c.NextConfigVersion != 0 {
		t.Fatalf("after the commit: version %x servers %d next %x", c.ConfigVersion, len(c.Servers), c.NextConfigVersion)
	}

	// A proposal older than the committed configuration is not recorded.
	rp.reconfigAccepted([]zab.Entry{reconfigEntry(four, v1)})
	if exists(next) {
		t.Fatal("a stale proposal was recorded")
	}
}
