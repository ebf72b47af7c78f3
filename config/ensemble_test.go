package config

import (
	"bytes"
	"path/filepath"
	"strconv"
	"testing"
)

func TestLocalEnsembleStandalone(t *testing.T) {
	cs := LocalEnsemble(1, "/base", 2181)
	if len(cs) != 1 {
		t.Fatalf("len = %d, want 1", len(cs))
	}
	c := cs[0]
	if c.Distributed() || len(c.Servers) != 0 {
		t.Errorf("n=1 should be standalone: %+v", c)
	}
	if c.ClientListenAddr() != "127.0.0.1:2181" || c.DataDir != filepath.Join("/base", "server1") {
		t.Errorf("ClientListenAddr = %q, DataDir = %q", c.ClientListenAddr(), c.DataDir)
	}
}

func TestLocalEnsembleThree(t *testing.T) {
	const n, basePort = 3, 20000
	cs := LocalEnsemble(n, "/base", basePort)
	if len(cs) != n {
		t.Fatalf("len = %d", len(cs))
	}
	ports := map[int]string{}
	dirs := map[string]bool{}
	for i, c := range cs {
		id := int64(i + 1)
		if c.MyID != id || !c.Distributed() || len(c.Voters()) != n || c.Self() == nil {
			t.Errorf("server %d: MyID %d, Distributed %v, voters %d", id, c.MyID, c.Distributed(), len(c.Voters()))
			continue
		}
		if c.InitLimit == 0 || c.SyncLimit == 0 {
			t.Errorf("server %d: initLimit/syncLimit unset", id)
		}
		if want := "127.0.0.1:" + strconv.Itoa(basePort+i); c.ClientListenAddr() != want {
			t.Errorf("server %d: ClientListenAddr = %q, want %q", id, c.ClientListenAddr(), want)
		}
		dirs[c.DataDir] = true
		s := c.Self()
		for _, p := range []int{s.ClientPort, s.QuorumPort, s.ElectionPort} {
			if p < basePort || p >= basePort+3*n {
				t.Errorf("server %d: port %d outside %d..%d", id, p, basePort, basePort+3*n-1)
			}
			if prev, ok := ports[p]; ok {
				t.Errorf("port %d used by %s and server %d", p, prev, id)
			}
			ports[p] = "server " + strconv.FormatInt(id, 10)
		}
		// Every config lists the same servers.
		for j := range c.Servers {
			if c.Servers[j] != cs[0].Servers[j] {
				t.Errorf("server %d's server list differs from server 1's", id)
			}
		}
	}
	if len(dirs) != n {
		t.Errorf("data dirs not distinct: %v", dirs)
	}
}

// Each generated config, written out with its myid, loads back and
// passes validation.
func TestLocalEnsembleLoads(t *testing.T) {
	base := t.TempDir()
	for _, c := range LocalEnsemble(3, base, 21000) {
		if err := c.WriteMyID(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(c.DataDir, "zoo.cfg")
		var buf bytes.Buffer
		if err := c.WriteZooCfg(&buf); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, buf.Bytes())
		got, warnings, err := Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 0 {
			t.Errorf("warnings = %q", warnings)
		}
		if got.MyID != c.MyID || got.ClientListenAddr() != c.ClientListenAddr() {
			t.Errorf("loaded MyID %d addr %q, want %d %q", got.MyID, got.ClientListenAddr(), c.MyID, c.ClientListenAddr())
		}
	}
}

func TestLocalEnsembleInvalid(t *testing.T) {
	for _, tc := range []struct{ n, port int }{{0, 2181}, {-1, 2181}, {3, 0}, {3, 65530}, {256, 2000}} {
		if cs := LocalEnsemble(tc.n, "/b", tc.port); cs != nil {
			t.Errorf("LocalEnsemble(%d, %d) = %d configs, want nil", tc.n, tc.port, len(cs))
		}
	}
	if cs := LocalEnsemble(3, "/b", 65535-8); len(cs) != 3 {
		t.Errorf("ports up to 65535 should fit")
	}
}

// TestQuorumConfig: the text of /zookeeper/config, as ZooKeeper 3.9.3's
// QuorumPeerConfig formats these same lines (QuorumVerifier.toString, run
// on the jars: ids in order, the peer type always named, a bare client
// port on the wildcard address, no client part when the line has none).
func TestQuorumConfig(t *testing.T) {
	c, _ := mustParse(t, `tickTime=2000
initLimit=10
syncLimit=5
dataDir=/tmp/qc
clientPort=2183
server.12=127.0.0.1:2892:3892;127.0.0.1:2185
server.1=127.0.0.1:2888:3888;127.0.0.1:2181
server.2=127.0.0.1:2889:3889:observer;2182
server.3=localhost:2890:3890
server.4=127.0.0.1:2891:3891:participant;0.0.0.0:2184
`)
	want := "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n" +
		"server.2=127.0.0.1:2889:3889:observer;0.0.0.0:2182\n" +
		"server.3=localhost:2890:3890:participant\n" +
		"server.4=127.0.0.1:2891:3891:participant;0.0.0.0:2184\n" +
		"server.12=127.0.0.1:2892:3892:participant;127.0.0.1:2185\n" +
		"version=0"
	if got := c.QuorumConfig(); got != want {
		t.Errorf("QuorumConfig:\n%s\nwant\n%s", got, want)
	}
	if got := Default().QuorumConfig(); got != "" {
		t.Errorf("standalone QuorumConfig %q, want empty", got)
	}
}
