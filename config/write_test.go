package config

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func roundTrip(t *testing.T, c *Config) (*Config, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteZooCfg(&buf); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := Parse(bytes.NewReader(buf.Bytes()), nil)
	if err != nil {
		t.Fatalf("Parse(WriteZooCfg()) failed: %v\n%s", err, buf.String())
	}
	for _, w := range warnings {
		// The reconfigEnabled warning says the operation is not
		// implemented, a fact about corral, not about the output.
		if !strings.Contains(w, "only one server specified") && !strings.Contains(w, "reconfigEnabled: the reconfig operation is not implemented") {
			t.Errorf("warning on our own output: %q\n%s", w, buf.String())
		}
	}
	return got, buf.String()
}

// roundTripConfigs are configs whose WriteZooCfg output must parse back to
// an equal Config (MyID aside); zookeeper_test.go also feeds them to
// ZooKeeper.
func roundTripConfigs(dataDir string) map[string]*Config {
	m := map[string]*Config{}

	m["defaults"] = Default()
	m["defaults"].DataDir, m["defaults"].DataLogDir, m["defaults"].ClientPort = dataDir, dataDir, 2181

	c := Default()
	c.TickTime = 500
	c.InitLimit, c.SyncLimit = 20, 7
	c.DataDir = dataDir + "/with space/é€ and #!=:\\ odd"
	c.DataLogDir = dataDir + "/txnlog"
	c.ClientPort, c.ClientPortAddress = 2190, "127.0.0.1"
	c.MaxClientCnxns = 0
	c.MinSessionTimeout, c.MaxSessionTimeout = 1000, 123456
	c.AutopurgeSnapRetainCount, c.AutopurgePurgeInterval = 5, 12
	c.ReconfigEnabled = true
	c.SyncEnabled = false
	c.QuorumListenOnAllIPs = true
	c.SnapCount = 20
	c.GlobalOutstandingLimit = 77
	c.JuteMaxBuffer = 4 << 20
	c.FourLetterWordWhitelist = []string{"ruok", "mntr", "srvr"}
	c.ExtendedTypesEnabled = true
	c.SuperDigest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="
	c.ContainerCheckIntervalMs = 1000
	c.ContainerMaxPerMinute = 5
	c.ContainerMaxNeverUsedIntervalMs = 1 << 40
	c.ForceSync, c.Durability = false, DurabilityAsync
	c.Store, c.KVLeaderPolicy, c.KVLeaderChangeThreshold = "kv", "coolest", 1.5
	c.KVLeaderChangeMinIntervalMs, c.KVMemTableSize = 5000, 4<<20
	m["everything"] = c

	c = Default()
	c.DataDir, c.DataLogDir, c.ClientPort = dataDir, dataDir, 2181
	c.FourLetterWordWhitelist = []string{"*"}
	c.ForceSync, c.Durability = false, DurabilityDiskless
	c.InitLimit, c.SyncLimit = 5, 2
	c.StandaloneEnabled = false
	c.Servers = []Server{
		{ID: 1, Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888},
		{ID: 2, Host: "127.0.0.1", QuorumPort: 2889, ElectionPort: 3889, ClientPort: 2182},
		{ID: 3, Host: "127.0.0.1", QuorumPort: 2890, ElectionPort: 3890, ClientAddr: "127.0.0.1", ClientPort: 2183},
		{ID: 4, Host: "127.0.0.1", QuorumPort: 2891, ElectionPort: 3891, Observer: true},
		{ID: 9, Host: "::1", QuorumPort: 2892, ElectionPort: 3892, Observer: true, ClientAddr: "::1", ClientPort: 2189},
	}
	c.RlogRoot = "/logs"
	c.RlogGroupCommit = RlogGroupCommitCoupled
	c.RlogSegmentSize = 8 << 20
	m["servers"] = c

	for i, e := range LocalEnsemble(3, dataDir, 12000) {
		m["ensemble"+string(rune('1'+i))] = e
	}
	m["standalone"] = LocalEnsemble(1, dataDir, 12100)[0]
	return m
}

func TestWriteZooCfgRoundTrip(t *testing.T) {
	for name, c := range roundTripConfigs("/var/zk") {
		t.Run(name, func(t *testing.T) {
			got, text := roundTrip(t, c)
			want := *c
			want.MyID = 0 // not in zoo.cfg
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip changed the config\n got %+v\nwant %+v\n%s", got, &want, text)
			}
			for _, r := range text {
				if r > 0x7e {
					t.Errorf("output is not ASCII (ZooKeeper reads ISO-8859-1):\n%s", text)
					break
				}
			}
		})
	}
}

func TestWriteZooCfgForceSyncFollowsDurability(t *testing.T) {
	for _, d := range []Durability{DurabilityAsync, DurabilityDiskless} {
		c := Default()
		c.DataDir, c.ClientPort, c.Durability = "/d", 2181, d
		var buf bytes.Buffer
		if err := c.WriteZooCfg(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "\nforceSync=no\n") {
			t.Errorf("durability=%s: want forceSync=no for ZooKeeper\n%s", d, buf.String())
		}
		got, _ := roundTrip(t, c)
		if got.Durability != d {
			t.Errorf("durability %s read back as %s", d, got.Durability)
		}
	}
}

func TestJVMFlags(t *testing.T) {
	c := Default()
	if f := c.JVMFlags(); len(f) != 0 {
		t.Errorf("defaults: JVMFlags = %q, want none", f)
	}
	c.JuteMaxBuffer = 4194304
	c.ContainerCheckIntervalMs = 100
	c.ContainerMaxPerMinute = 7
	c.ContainerMaxNeverUsedIntervalMs = 5000
	want := []string{
		"-Djute.maxbuffer=4194304",
		"-Dznode.container.checkIntervalMs=100",
		"-Dznode.container.maxPerMinute=7",
		"-Dznode.container.maxNeverUsedIntervalMs=5000",
	}
	if got := c.JVMFlags(); !reflect.DeepEqual(got, want) {
		t.Errorf("JVMFlags = %q, want %q", got, want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }

var errFail = errors.New("disk full")

func TestWriteZooCfgReportsWriteError(t *testing.T) {
	if err := Default().WriteZooCfg(failWriter{}); err != errFail {
		t.Errorf("err = %v, want the writer's", err)
	}
}
