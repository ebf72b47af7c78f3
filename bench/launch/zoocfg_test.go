package launch

import (
	"reflect"
	"strings"
	"testing"

	"github.com/corral-db/corral/config"
)

// sameConfig fails unless got and want, zoo.cfg texts, read as equal
// configurations: config.WriteZooCfg spells out every default, so the
// files differ in lines but must not in meaning.
func sameConfig(t *testing.T, got, want string) {
	t.Helper()
	g, _, err := config.Parse(strings.NewReader(got), nil)
	if err != nil {
		t.Fatalf("parse generated zoo.cfg: %v\n%s", err, got)
	}
	w, _, err := config.Parse(strings.NewReader(want), nil)
	if err != nil {
		t.Fatalf("parse expected zoo.cfg: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("zoo.cfg:\n%s\nreads as\n%+v\nwant (from)\n%s\n%+v", got, g, want, w)
	}
}

func TestZooCfg(t *testing.T) {
	got := ServerConfig{DataDir: "/tmp/x/data", Port: 21810}.ZooCfg()
	want := `# the benchmark's zoo.cfg before it went through config.WriteZooCfg
tickTime=2000
initLimit=10
syncLimit=5
dataDir=/tmp/x/data
clientPort=21810
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=yes
globalOutstandingLimit=100000
admin.enableServer=false
4lw.commands.whitelist=*
`
	sameConfig(t, got, want)
}

func TestZooCfgOps(t *testing.T) {
	got := ServerConfig{DataDir: "/tmp/x/data", Port: 21810, Ops: &OpsPorts{Admin: 18080, Metrics: 17000}}.ZooCfg()
	want := `# corral+ops: the AdminServer (console on by default) and Prometheus on loopback
tickTime=2000
initLimit=10
syncLimit=5
dataDir=/tmp/x/data
clientPort=21810
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=yes
globalOutstandingLimit=100000
admin.enableServer=true
admin.serverAddress=127.0.0.1
admin.serverPort=18080
metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpHost=127.0.0.1
metricsProvider.httpPort=17000
4lw.commands.whitelist=*
`
	sameConfig(t, got, want)
	if Base(TargetCorralOps) != TargetCorral || Base(TargetZooKeeper) != TargetZooKeeper {
		t.Errorf("Base: corral+ops starts %q, zookeeper %q", Base(TargetCorralOps), Base(TargetZooKeeper))
	}
}

func TestZooCfgEnsembleMember(t *testing.T) {
	peers := []Peer{
		{ID: 1, QuorumPort: 3001, ElectionPort: 3002, ClientPort: 3003},
		{ID: 2, QuorumPort: 3004, ElectionPort: 3005, ClientPort: 3006},
		{ID: 3, QuorumPort: 3007, ElectionPort: 3008, ClientPort: 3009},
	}
	got := ServerConfig{DataDir: "/tmp/x/s2/data", Port: 9999, Peers: peers,
		Timing: Timing{TickTimeMs: 500, InitLimit: 20}}.ZooCfg()
	// No clientPort line (the client address is on the server.N line, and
	// ZooKeeper rejects a clientPortAddress that differs from it); syncLimit
	// left zero takes the default.
	want := `# the benchmark's zoo.cfg before it went through config.WriteZooCfg
tickTime=500
initLimit=20
syncLimit=5
dataDir=/tmp/x/s2/data
maxClientCnxns=0
forceSync=yes
globalOutstandingLimit=100000
admin.enableServer=false
4lw.commands.whitelist=*
server.1=127.0.0.1:3001:3002;127.0.0.1:3003
server.2=127.0.0.1:3004:3005;127.0.0.1:3006
server.3=127.0.0.1:3007:3008;127.0.0.1:3009
`
	sameConfig(t, got, want)
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := FreePorts(9)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v", ports)
		}
		seen[p] = true
	}
}
