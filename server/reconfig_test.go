package server

import (
	"errors"
	"slices"
	"testing"

	"github.com/corral-db/corral/config"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
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
