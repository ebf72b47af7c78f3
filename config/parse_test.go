package config

import (
	"github.com/corral-db/corral/internal/zktls"
	"slices"

	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

const base = "dataDir=/var/zk\nclientPort=2181\n"

func parse(t *testing.T, in string) (*Config, []string, error) {
	t.Helper()
	return Parse(strings.NewReader(in), nil)
}

func mustParse(t *testing.T, in string) (*Config, []string) {
	t.Helper()
	c, w, err := parse(t, in)
	if err != nil {
		t.Fatalf("Parse(%q): %v", in, err)
	}
	return c, w
}

func TestDefaults(t *testing.T) {
	c, warnings := mustParse(t, base)
	if len(warnings) != 0 {
		t.Errorf("warnings = %q, want none", warnings)
	}
	want := &Config{
		TickTime:                 3000,
		DataDir:                  "/var/zk",
		DataLogDir:               "/var/zk",
		ClientPort:               2181,
		StandaloneEnabled:        true,
		SyncEnabled:              true,
		SnapCount:                100000,
		SnapSizeLimitKB:          DefaultSnapSizeLimitKB,
		AutopurgeSnapRetainCount: 3,
		MaxClientCnxns:           60,
		MinSessionTimeout:        6000,
		MaxSessionTimeout:        60000,
		GlobalOutstandingLimit:   1000,
		JuteMaxBuffer:            0xfffff,
		FourLetterWordWhitelist:  []string{"srvr"},
		ForceSync:                true,
		Durability:               DurabilitySync,
		ContainerCheckIntervalMs: 60000,
		ContainerMaxPerMinute:    10000,
		Metrics:                  MetricsConfig{HTTPPort: 7000, ExportJvmInfo: true},
		Admin: AdminConfig{EnableServer: true, ServerPort: 8080, CommandURL: "/commands",
			IdleTimeoutMs: 30000, RateLimiterIntervalMs: 300000, SnapshotEnabled: true, RestoreEnabled: true, ConsoleEnabled: true},
		SSL:       zktls.Settings{HostnameVerification: true, HandshakeDetectionTimeoutMs: 5000},
		QuorumSSL: zktls.Settings{HostnameVerification: true, HandshakeDetectionTimeoutMs: 5000},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse(minimal) =\n%+v\nwant\n%+v", c, want)
	}
	d := Default()
	d.DataDir, d.DataLogDir, d.ClientPort = "/var/zk", "/var/zk", 2181
	if !reflect.DeepEqual(c, d) {
		t.Errorf("Parse(minimal) differs from Default():\n%+v\n%+v", c, d)
	}
	if c.Distributed() || c.ClientListenAddr() != "127.0.0.1:2181" {
		t.Errorf("Distributed = %v, ClientListenAddr = %q; want false, 127.0.0.1:2181", c.Distributed(), c.ClientListenAddr())
	}
}

// TestKeys sets every honoured key and checks the field it lands in.
func TestKeys(t *testing.T) {
	tests := []struct {
		lines string
		get   func(*Config) any
		want  any
	}{
		{"tickTime=2000", func(c *Config) any { return c.TickTime }, 2000},
		{"tickTime=2000", func(c *Config) any { return [2]int{c.MinSessionTimeout, c.MaxSessionTimeout} }, [2]int{4000, 40000}},
		{"initLimit=10", func(c *Config) any { return c.InitLimit }, 10},
		{"syncLimit=5", func(c *Config) any { return c.SyncLimit }, 5},
		{"dataDir=/other", func(c *Config) any { return [2]string{c.DataDir, c.DataLogDir} }, [2]string{"/other", "/other"}},
		{"dataLogDir=/txnlog", func(c *Config) any { return [2]string{c.DataDir, c.DataLogDir} }, [2]string{"/var/zk", "/txnlog"}},
		{"clientPort=2182", func(c *Config) any { return c.ClientPort }, 2182},
		{"clientPortAddress=0.0.0.0", func(c *Config) any { return c.ClientListenAddr() }, "0.0.0.0:2181"},
		{"clientPortAddress=[::1]", func(c *Config) any { return c.ClientListenAddr() }, "[::1]:2181"},
		{"maxClientCnxns=0", func(c *Config) any { return c.MaxClientCnxns }, 0},
		{"maxClientCnxns=100", func(c *Config) any { return c.MaxClientCnxns }, 100},
		{"minSessionTimeout=1000", func(c *Config) any { return [2]int{c.MinSessionTimeout, c.MaxSessionTimeout} }, [2]int{1000, 60000}},
		{"maxSessionTimeout=100000", func(c *Config) any { return [2]int{c.MinSessionTimeout, c.MaxSessionTimeout} }, [2]int{6000, 100000}},
		{"minSessionTimeout=-1\nmaxSessionTimeout=-1", func(c *Config) any { return [2]int{c.MinSessionTimeout, c.MaxSessionTimeout} }, [2]int{6000, 60000}},
		{"minSessionTimeout=5000\nmaxSessionTimeout=5000", func(c *Config) any { return [2]int{c.MinSessionTimeout, c.MaxSessionTimeout} }, [2]int{5000, 5000}},
		{"autopurge.snapRetainCount=10", func(c *Config) any { return c.AutopurgeSnapRetainCount }, 10},
		{"autopurge.purgeInterval=24", func(c *Config) any { return c.AutopurgePurgeInterval }, 24},
		{"standaloneEnabled=false\nserver.1=h:1:2\ninitLimit=1\nsyncLimit=1", func(c *Config) any { return [2]bool{c.StandaloneEnabled, c.Distributed()} }, [2]bool{false, true}},
		{"reconfigEnabled=true", func(c *Config) any { return c.ReconfigEnabled }, true},
		{"reconfigEnabled=TRUE", func(c *Config) any { return c.ReconfigEnabled }, true},
		{"syncEnabled=false", func(c *Config) any { return c.SyncEnabled }, false},
		{"quorumListenOnAllIPs=true", func(c *Config) any { return c.QuorumListenOnAllIPs }, true},
		{"electionAlg=3", func(c *Config) any { return c.TickTime }, 3000},
		{"peerType=observer", func(c *Config) any { return c.TickTime }, 3000},
		{"version=100000000", func(c *Config) any { return c.TickTime }, 3000},
		{"snapCount=5000", func(c *Config) any { return c.SnapCount }, 5000},
		{"zookeeper.snapCount=5000", func(c *Config) any { return c.SnapCount }, 5000},
		{"snapCount=0x10", func(c *Config) any { return c.SnapCount }, 16},
		{"snapCount=#10", func(c *Config) any { return c.SnapCount }, 16},
		{"snapCount=010", func(c *Config) any { return c.SnapCount }, 8},
		{"snapSizeLimitInKb=1024", func(c *Config) any { return c.SnapSizeLimitKB }, int64(1024)},
		{"zookeeper.snapSizeLimitInKb=0", func(c *Config) any { return c.SnapSizeLimitKB }, int64(0)},
		{"snapSizeLimitInKb=-1", func(c *Config) any { return c.SnapSizeLimitKB }, int64(-1)},
		{"forceSync=no", func(c *Config) any { return [2]any{c.ForceSync, c.Durability} }, [2]any{false, DurabilityAsync}},
		{"forceSync=yes", func(c *Config) any { return [2]any{c.ForceSync, c.Durability} }, [2]any{true, DurabilitySync}},
		{"zookeeper.forceSync=no", func(c *Config) any { return c.ForceSync }, false},
		{"globalOutstandingLimit=50", func(c *Config) any { return c.GlobalOutstandingLimit }, 50},
		{"zookeeper.globalOutstandingLimit=50", func(c *Config) any { return c.GlobalOutstandingLimit }, 50},
		{"jute.maxbuffer=4194304", func(c *Config) any { return c.JuteMaxBuffer }, 4194304},
		{"jute.maxbuffer=0x3fffff", func(c *Config) any { return c.JuteMaxBuffer }, 0x3fffff},
		{"zookeeper.jute.maxbuffer=100", func(c *Config) any { return c.JuteMaxBuffer }, 100},
		{"4lw.commands.whitelist=*", func(c *Config) any { return c.FourLetterWordWhitelist }, []string{"*"}},
		{"4lw.commands.whitelist=stat, ruok , ,conf", func(c *Config) any { return c.FourLetterWordWhitelist }, []string{"stat", "ruok", "conf", "srvr"}},
		{"4lw.commands.whitelist=srvr,mntr,srvr", func(c *Config) any { return c.FourLetterWordWhitelist }, []string{"srvr", "mntr"}},
		{"4lw.commands.whitelist=stat,*", func(c *Config) any { return c.FourLetterWordWhitelist }, []string{"*"}},
		{"4lw.commands.whitelist=", func(c *Config) any { return c.FourLetterWordWhitelist }, []string{"srvr"}},
		{"zookeeper.4lw.commands.whitelist=mntr", func(c *Config) any { return c.FourLetterWordWhitelist }, []string{"mntr", "srvr"}},
		{"extendedTypesEnabled=true", func(c *Config) any { return c.ExtendedTypesEnabled }, true},
		{"enforceQuota=true", func(c *Config) any { return c.EnforceQuota }, true},
		{"zookeeper.enforceQuota=false", func(c *Config) any { return c.EnforceQuota }, false},
		{"audit.enable=true", func(c *Config) any { return c.AuditEnable }, true},
		{"zookeeper.audit.enable=true", func(c *Config) any { return c.AuditEnable }, true},
		{"audit.logFile=/var/log/zk/audit.log", func(c *Config) any { return c.AuditLogFile }, "/var/log/zk/audit.log"},
		{"zookeeper.extendedTypesEnabled=True", func(c *Config) any { return c.ExtendedTypesEnabled }, true},
		{"DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=", func(c *Config) any { return c.SuperDigest }, "super:D/InIHSb7yEEbrWz8b9l71RjZJU="},
		{"zookeeper.DigestAuthenticationProvider.superDigest=super:x", func(c *Config) any { return c.SuperDigest }, "super:x"},
		{"znode.container.checkIntervalMs=1000", func(c *Config) any { return c.ContainerCheckIntervalMs }, 1000},
		{"zookeeper.znode.container.checkIntervalMs=1000", func(c *Config) any { return c.ContainerCheckIntervalMs }, 1000},
		{"znode.container.maxNeverUsedIntervalMs=30000", func(c *Config) any { return c.ContainerMaxNeverUsedIntervalMs }, int64(30000)},
		{"znode.container.maxPerMinute=50", func(c *Config) any { return c.ContainerMaxPerMinute }, 50},
		{"durability=diskless", func(c *Config) any { return [2]any{c.ForceSync, c.Durability} }, [2]any{false, DurabilityDiskless}},
		{"durability=async\nforceSync=yes", func(c *Config) any { return [2]any{c.ForceSync, c.Durability} }, [2]any{false, DurabilityAsync}},
		{"durability=ASYNC", func(c *Config) any { return c.Durability }, DurabilityAsync},
		{"durability=sync\nforceSync=no", func(c *Config) any { return [2]any{c.ForceSync, c.Durability} }, [2]any{false, DurabilitySync}},
		{"forceSync=no\ndurability=diskless", func(c *Config) any { return c.Durability }, DurabilityDiskless},
		{"tickTime = 2000   ", func(c *Config) any { return c.TickTime }, 2000},
		{"tickTime: 2000", func(c *Config) any { return c.TickTime }, 2000},
		{"tickTime 2000", func(c *Config) any { return c.TickTime }, 2000},
		{"tickTime=+2000", func(c *Config) any { return c.TickTime }, 2000},
		{"tickTime=20\\\n  00", func(c *Config) any { return c.TickTime }, 2000},
		{"tickTime=1000\ntickTime=2000", func(c *Config) any { return c.TickTime }, 2000},
	}
	for _, tc := range tests {
		t.Run(tc.lines, func(t *testing.T) {
			c, _ := mustParse(t, base+tc.lines+"\n")
			if got := tc.get(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClamps(t *testing.T) {
	tests := []struct {
		line    string
		get     func(*Config) int
		want    int
		warning string // substring of the one warning expected
	}{
		{"autopurge.snapRetainCount=1", func(c *Config) int { return c.AutopurgeSnapRetainCount }, 3, "autopurge.snapRetainCount: 1 is below the minimum; using 3"},
		{"autopurge.snapRetainCount=-5", func(c *Config) int { return c.AutopurgeSnapRetainCount }, 3, "autopurge.snapRetainCount"},
		{"autopurge.snapRetainCount=3", func(c *Config) int { return c.AutopurgeSnapRetainCount }, 3, ""},
		{"snapCount=1", func(c *Config) int { return c.SnapCount }, 2, "snapCount: 1 is below the minimum; using 2"},
		{"snapCount=-7", func(c *Config) int { return c.SnapCount }, 2, "snapCount"},
		{"snapCount=2", func(c *Config) int { return c.SnapCount }, 2, ""},
		{"autopurge.purgeInterval=-1", func(c *Config) int { return c.AutopurgePurgeInterval }, 0, "autopurge.purgeInterval: -1 is negative"},
		{"autopurge.purgeInterval=0", func(c *Config) int { return c.AutopurgePurgeInterval }, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			c, warnings := mustParse(t, base+tc.line+"\n")
			if got := tc.get(c); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			if tc.warning == "" {
				if len(warnings) != 0 {
					t.Errorf("warnings = %q, want none", warnings)
				}
				return
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning) {
				t.Errorf("warnings = %q, want one containing %q", warnings, tc.warning)
			}
		})
	}
}

func TestIgnoredKeysWarnOnce(t *testing.T) {
	tests := []struct {
		key, reason string
	}{
		{"serverCnxnFactory", reasonJVMOnly},
		{"zookeeper.serverCnxnFactory", reasonJVMOnly},
		{"admin.someFutureKey", reasonJVMOnly},
		{"quorum.cnxn.threads.size", reasonJVMOnly},
		{"jvm.pause.monitor", reasonJVMOnly},
		{"metricsProvider.numWorkerThreads", reasonJVMOnly},
		{"fips-mode", reasonJVMOnly},
		{"zookeeper.nio.numWorkerThreads", reasonJVMOnly},
		{"localSessionsEnabled", reasonUnsupported},
		{"observerMasterPort", reasonUnsupported},
		{"multiAddress.enabled", reasonUnsupported},
		{"skipACL", reasonUnsupported},
		{"zookeeper.leaderServes", reasonUnsupported},
		{"4lw.commands.other", reasonUnsupported},
		{"noSuchKey", reasonUnknown},
		{"zookeeper.tickTime", reasonUnknown}, // QuorumPeerConfig keys have no zookeeper. form
		{"zookeeper.durability", reasonUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			var logged bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logged, nil))
			c, warnings, err := Parse(strings.NewReader(base+tc.key+"=1\n"), logger)
			if err != nil {
				t.Fatal(err)
			}
			want := "line 3: " + tc.key + ": " + tc.reason
			if len(warnings) != 1 || warnings[0] != want {
				t.Errorf("warnings = %q, want [%q]", warnings, want)
			}
			if !strings.Contains(logged.String(), tc.key) || strings.Count(logged.String(), "level=WARN") != 1 {
				t.Errorf("log = %q, want one WARN naming %s", logged.String(), tc.key)
			}
			if d, _ := mustParse(t, base); !reflect.DeepEqual(c, d) {
				t.Errorf("ignored key changed the config: %+v", c)
			}
		})
	}
}

func TestSeveralIgnoredKeysOneWarningEach(t *testing.T) {
	_, warnings := mustParse(t, base+"serverCnxnFactory=x\njvm.pause.warn=1\nfoo=bar\nadmin.idle=8080\n")
	want := []string{
		"line 3: serverCnxnFactory: ignored: JVM-only",
		"line 4: jvm.pause.warn: ignored: JVM-only",
		"line 5: foo: ignored: unknown key",
		"line 6: admin.idle: ignored: JVM-only",
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings = %q, want %q", warnings, want)
	}
}

func TestDuplicateKeyWarning(t *testing.T) {
	c, warnings := mustParse(t, base+"snapCount=10\nzookeeper.snapCount=20\n")
	if c.SnapCount != 20 {
		t.Errorf("SnapCount = %d, want the last value 20", c.SnapCount)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "zookeeper.snapCount: set again (first on line 3)") {
		t.Errorf("warnings = %q, want one about the repeat", warnings)
	}
}

// TestMemoryLimit: memory.limit takes a byte count with an optional
// power-of-1024 suffix; unset it is 0 (no limit).
func TestMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"":                          0,
		"memory.limit=1073741824\n": 1 << 30,
		"memory.limit=512M\n":       512 << 20,
		"memory.limit=2GiB\n":       2 << 30,
		"memory.limit=3g\n":         3 << 30,
		"memory.limit=64KB\n":       64 << 10,
		"memory.limit=1T\n":         1 << 40,
		"memory.limit=0\n":          0,
	} {
		c, warnings := mustParse(t, base+in)
		if c.MemoryLimit != want || len(warnings) != 0 {
			t.Errorf("%q: MemoryLimit %d, warnings %q; want %d and none", in, c.MemoryLimit, warnings, want)
		}
	}
}

// TestRlogRoot: rlog.root is an absolute znode path other than /;
// unset, there are no logs.
func TestRlogRoot(t *testing.T) {
	if c, _ := mustParse(t, base); c.RlogRoot != "" {
		t.Errorf("default RlogRoot %q, want none", c.RlogRoot)
	}
	if c, w := mustParse(t, base+"rlog.root=/logs\n"); c.RlogRoot != "/logs" || len(w) != 0 {
		t.Errorf("RlogRoot %q, warnings %q; want /logs and none", c.RlogRoot, w)
	}
	for _, bad := range []string{"/", "logs", "/logs/", ""} {
		_, _, err := parse(t, base+"rlog.root="+bad+"\n")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "rlog.root") {
			t.Errorf("rlog.root=%q: %v, want an error naming the key", bad, err)
		}
	}
}

// TestRlogGroupCommit: rlog.groupCommit is decoupled (the default,
// stored as "") or coupled; anything else names the key.
func TestRlogGroupCommit(t *testing.T) {
	if c, _ := mustParse(t, base); c.RlogGroupCommit != "" {
		t.Errorf("default RlogGroupCommit %q, want none", c.RlogGroupCommit)
	}
	if c, _ := mustParse(t, base+"rlog.groupCommit=decoupled\n"); c.RlogGroupCommit != "" {
		t.Errorf("decoupled: RlogGroupCommit %q, want the default", c.RlogGroupCommit)
	}
	if c, w := mustParse(t, base+"rlog.groupCommit=coupled\n"); c.RlogGroupCommit != RlogGroupCommitCoupled || len(w) != 0 {
		t.Errorf("coupled: RlogGroupCommit %q, warnings %q", c.RlogGroupCommit, w)
	}
	for _, bad := range []string{"", "Coupled", "both"} {
		_, _, err := parse(t, base+"rlog.groupCommit="+bad+"\n")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "rlog.groupCommit") {
			t.Errorf("rlog.groupCommit=%q: %v, want an error naming the key", bad, err)
		}
	}
}

// TestRlogSegmentSize: rlog.segmentSize takes a size from 64K to 1G;
// anything else names the key.
func TestRlogSegmentSize(t *testing.T) {
	if c, _ := mustParse(t, base); c.RlogSegmentSize != 0 {
		t.Errorf("default RlogSegmentSize %d, want 0", c.RlogSegmentSize)
	}
	for in, want := range map[string]int64{"1M": 1 << 20, "65536": 64 << 10, "1G": 1 << 30, "256MiB": 256 << 20} {
		if c, w := mustParse(t, base+"rlog.segmentSize="+in+"\n"); c.RlogSegmentSize != want || len(w) != 0 {
			t.Errorf("rlog.segmentSize=%s: %d (warnings %q), want %d", in, c.RlogSegmentSize, w, want)
		}
	}
	for _, bad := range []string{"", "0", "1000", "2G", "-1M", "big"} {
		_, _, err := parse(t, base+"rlog.segmentSize="+bad+"\n")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "rlog.segmentSize") {
			t.Errorf("rlog.segmentSize=%q: %v, want an error naming the key", bad, err)
		}
	}
}

// TestKVLeaderChangeKeys: the compaction-aware leader change's keys
// parse, and bad values name their key.
func TestKVLeaderChangeKeys(t *testing.T) {
	c, w := mustParse(t, base+"kv.leaderPolicy=RoundRobin\nkv.leaderChangeThreshold=1.5\nkv.leaderChangeMinIntervalMs=2000\nkv.memTableSize=4M\n")
	if c.KVLeaderPolicy != "roundrobin" || c.KVLeaderChangeThreshold != 1.5 || c.KVLeaderChangeMinIntervalMs != 2000 || c.KVMemTableSize != 4<<20 || len(w) != 0 {
		t.Errorf("got %q %v %v %v, warnings %q", c.KVLeaderPolicy, c.KVLeaderChangeThreshold, c.KVLeaderChangeMinIntervalMs, c.KVMemTableSize, w)
	}
	if c, _ := mustParse(t, base); c.KVLeaderPolicy != "" || c.KVLeaderChangeThreshold != 0 {
		t.Errorf("defaults: %q %v, want unset", c.KVLeaderPolicy, c.KVLeaderChangeThreshold)
	}
	for _, bad := range []string{
		"kv.leaderPolicy=rr", "kv.leaderPolicy=", "kv.leaderChangeThreshold=0", "kv.leaderChangeThreshold=-1",
		"kv.leaderChangeThreshold=NaN", "kv.leaderChangeThreshold=x", "kv.leaderChangeMinIntervalMs=-5",
		"kv.leaderChangeMinIntervalMs=1.5", "kv.memTableSize=4G", "kv.memTableSize=-1",
	} {
		_, _, err := parse(t, base+bad+"\n")
		key, _, _ := strings.Cut(bad, "=")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want an error naming the key", bad, err)
		}
	}
}

// TestKVRowCacheKey: kv.rowCacheSize takes a size, or "off" or 0 for
// none, and refuses anything else naming the key.
func TestKVRowCacheKey(t *testing.T) {
	for in, want := range map[string]int64{"64M": 64 << 20, "1048576": 1 << 20, "off": -1, "0": -1} {
		if c, _ := mustParse(t, base+"kv.rowCacheSize="+in+"\n"); c.KVRowCacheSize != want {
			t.Errorf("kv.rowCacheSize=%s: %d, want %d", in, c.KVRowCacheSize, want)
		}
	}
	if c, _ := mustParse(t, base); c.KVRowCacheSize != 0 {
		t.Errorf("unset: %d, want 0 (the default)", c.KVRowCacheSize)
	}
	for _, bad := range []string{"kv.rowCacheSize=-1", "kv.rowCacheSize=lots", "kv.rowCacheSize="} {
		_, _, err := parse(t, base+bad+"\n")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "kv.rowCacheSize") {
			t.Errorf("%s: %v, want an error naming the key", bad, err)
		}
	}
}

func TestDurabilityForceSyncConflictWarns(t *testing.T) {
	_, warnings := mustParse(t, base+"forceSync=no\ndurability=sync\n")
	if len(warnings) != 1 || !strings.Contains(warnings[0], "forceSync=no has no effect") {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestErrorsNameKeyAndValue(t *testing.T) {
	tests := []struct {
		in         string
		key, value string // both must appear in the message
	}{
		{base + "tickTime=abc", "tickTime", "abc"},
		{base + "tickTime=0", "tickTime", "0"},
		{base + "tickTime=-1", "tickTime", "-1"},
		{base + "tickTime=2000ms", "tickTime", "2000ms"},
		{base + "tickTime=99999999999", "tickTime", "99999999999"},
		{base + "tickTime=", "tickTime", `""`},
		{base + "initLimit=x", "initLimit", "x"},
		{base + "syncLimit=-2", "syncLimit", "-2"},
		{"dataDir=/d\nclientPort=-1", "clientPort", "-1"},
		{"dataDir=/d\nclientPort=65536", "clientPort", "65536"},
		{"dataDir=/d\nclientPort=21 81", "clientPort", "21 81"},
		{base + "maxClientCnxns=-1", "maxClientCnxns", "-1"},
		{base + "minSessionTimeout=-2", "minSessionTimeout", "-2"},
		{base + "minSessionTimeout=10000\nmaxSessionTimeout=5000", "minSessionTimeout", "10000"},
		{base + "minSessionTimeout=70000", "minSessionTimeout", "maxSessionTimeout (60000)"},
		{base + "snapCount=lots", "snapCount", "lots"},
		{base + "globalOutstandingLimit=0", "globalOutstandingLimit", "0"},
		{base + "globalOutstandingLimit=1e3", "globalOutstandingLimit", "1e3"},
		{base + "jute.maxbuffer=0", "jute.maxbuffer", "0"},
		{base + "jute.maxbuffer=0x", "jute.maxbuffer", "0x"},
		{base + "jute.maxbuffer=0x-1", "jute.maxbuffer", "0x-1"},
		{base + "jute.maxbuffer=09", "jute.maxbuffer", "09"},
		{base + "autopurge.snapRetainCount=three", "autopurge.snapRetainCount", "three"},
		{base + "autopurge.purgeInterval=1h", "autopurge.purgeInterval", "1h"},
		{base + "forceSync=false", "forceSync", "false"},
		{base + "forceSync=No", "forceSync", "No"},
		{base + "durability=fast", "durability", "fast"},
		{base + "memory.limit=lots", "memory.limit", "lots"},
		{base + "memory.limit=-1G", "memory.limit", "-1G"},
		{base + "memory.limit=1P", "memory.limit", "1P"},
		{base + "memory.limit=99999999T", "memory.limit", "99999999T"},
		{base + "extendedTypesEnabled=yes", "extendedTypesEnabled", "yes"},
		{base + "standaloneEnabled=1", "standaloneEnabled", "1"},
		{base + "reconfigEnabled=on", "reconfigEnabled", "on"},
		{base + "syncEnabled=", "syncEnabled", `""`},
		{base + "DigestAuthenticationProvider.superDigest=nocolon", "DigestAuthenticationProvider.superDigest", "nocolon"},
		{base + "znode.container.checkIntervalMs=0", "znode.container.checkIntervalMs", "0"},
		{base + "znode.container.maxNeverUsedIntervalMs=-1", "znode.container.maxNeverUsedIntervalMs", "-1"},
		{base + "electionAlg=1", "electionAlg", "1"},
		{base + "peerType=leader", "peerType", "leader"},
		{base + "version=xyz", "version", "xyz"},
		{base + "group.1=1:2:3", "group.1", "1:2:3"},
		{base + "weight.1=1", "weight.1", "1"},
		{"dataDir=\nclientPort=2181", "dataDir", `""`},
		{"clientPort=2181", "dataDir", "not set"},
		{"dataDir=/d", "clientPort", "not set"},
		{"dataDir=/d\nclientPortAddress=127.0.0.1", "clientPortAddress", "127.0.0.1"},
		{base + "server.1=h:1:2\nserver.2=h:3:4", "initLimit", "not set"},
		{base + "server.1=h:1:2\nserver.2=h:3:4\ninitLimit=5", "syncLimit", "not set"},
		{base + "standaloneEnabled=false", "standaloneEnabled", "false"},
		{base + "server.x=h:1:2", "server.x", `server id "x" is not a number`},
		{base + "server.0=h:1:2", "server.0", "h:1:2"},
		{base + "server.256=h:1:2", "server.256", "256"},
		{base + "server.1=h:1:2\nserver.01=h:3:4", "server.", "also defined"},
		{base + "server.1=h:2888", "server.1", "h:2888"},
		{base + "server.1=h:2888:3888:observer:x", "server.1", "h:2888:3888:observer:x"},
		{base + "server.1=h:2888:3888:leader", "server.1", "leader"},
		{base + "server.1=h:2888:2888", "server.1", "must differ"},
		{base + "server.1=h:-1:3888", "server.1", "quorum port"},
		{base + "server.1=h:2888:70000", "server.1", "election port"},
		{base + "server.1=h:x:3888", "server.1", `"x" is not a number`},
		{base + "server.1=:2888:3888", "server.1", "empty host"},
		{base + "server.1=[\x0f]:2888:3888", "server.1", "control character"},
		{base + "server.1=h\tx:2888:3888", "server.1", "control character"},
		{base + "server.1=h:2888:3888;a\x01:2181", "server.1", "control character"},
		{base + "server.1=h:2888:3888;a:b:2181", "server.1", "client address"},
		{base + "server.1=h:2888:3888;x", "server.1", "client port"},
		{base + "server.1=h:2888:3888;:", "server.1", "client address"},
		{base + "server.1=h:2888:3888;2181;2182", "server.1", "2181;2182"},
		{base + "server.1=h:2888:3888|g:2888:3888", "server.1", "multiple addresses"},
		{base + "server.1=[::1:2888:3888", "server.1", "[::1:2888:3888"},
		{base + "server.1=h:2888:3888:observer", "", "observers without participants"},
		{base + "server.1=h:1:2\nserver.2=h:3:4:observer", "", "observers without a quorum"},
		{base + "initLimit=1\nsyncLimit=1\nserver.1=h:1:2\nserver.2=h:2:3", "server.", "h:2"},
		{base + "initLimit=1\nsyncLimit=1\nserver.1=h:1:2;h:2181\nserver.2=h:3:4;h:2181", "client port", "h:2181"},
		{base + "dynamicConfigFile=/nonexistent/zoo.cfg.dynamic", "dynamicConfigFile", "/nonexistent/zoo.cfg.dynamic"},
		{base + `a=\u00G1`, "line 3", "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			c, _, err := parse(t, tc.in+"\n")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			if c != nil {
				t.Errorf("Parse returned a config with its error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config: ") || !strings.Contains(msg, tc.key) || !strings.Contains(msg, tc.value) {
				t.Errorf("error %q does not name %q and %q", msg, tc.key, tc.value)
			}
			if !errors.Is(err, ErrInvalid) && !strings.Contains(tc.in, "dynamicConfigFile") {
				t.Errorf("error %q is not ErrInvalid", msg)
			}
		})
	}
}

func TestKeyErrorAs(t *testing.T) {
	_, _, err := parse(t, base+"tickTime=abc\n")
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != "tickTime" || ke.Value != "abc" {
		t.Fatalf("err = %#v, want a KeyError for tickTime=abc", err)
	}
}

func TestServerLines(t *testing.T) {
	tests := []struct {
		value string
		want  Server
	}{
		{"127.0.0.1:2888:3888", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888}},
		{"127.0.0.1:2888:3888:observer", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888, Observer: true}},
		{"127.0.0.1:2888:3888:OBSERVER", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888, Observer: true}},
		{"127.0.0.1:2888:3888:participant", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888}},
		{"127.0.0.1:2888:3888;2181", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888, ClientPort: 2181}},
		{"127.0.0.1:2888:3888:participant;127.0.0.1:2181", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888, ClientAddr: "127.0.0.1", ClientPort: 2181}},
		{"zk1.example.com:2888:3888:observer;0.0.0.0:2181", Server{Host: "zk1.example.com", QuorumPort: 2888, ElectionPort: 3888, Observer: true, ClientAddr: "0.0.0.0", ClientPort: 2181}},
		{"[::1]:2888:3888;[::1]:2181", Server{Host: "::1", QuorumPort: 2888, ElectionPort: 3888, ClientAddr: "::1", ClientPort: 2181}},
		{"[fe80::1]:2888:3888:observer", Server{Host: "fe80::1", QuorumPort: 2888, ElectionPort: 3888, Observer: true}},
		// Java's String.split drops trailing empty strings.
		{"127.0.0.1:2888:3888:", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888}},
		{"127.0.0.1:2888:3888;", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888}},
		{" 127.0.0.1:2888:3888 ", Server{Host: "127.0.0.1", QuorumPort: 2888, ElectionPort: 3888}},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			in := base + "initLimit=5\nsyncLimit=2\nserver.7=" + tc.value + "\nserver.8=other:1:2\nserver.9=other:3:4\n"
			c, _ := mustParse(t, in)
			want := tc.want
			want.ID = 7
			if len(c.Servers) != 3 || !reflect.DeepEqual(c.Servers[0], want) {
				t.Fatalf("Servers = %+v, want [%+v, ...]", c.Servers, want)
			}
			// The line we would write reads back the same.
			again, err := parseServerLine("server.7", 7, c.Servers[0].String())
			if err != nil || !reflect.DeepEqual(again, want) {
				t.Errorf("String() = %q reads back as %+v, %v", c.Servers[0].String(), again, err)
			}
		})
	}
}

func TestServersSortedAndRoles(t *testing.T) {
	c, warnings := mustParse(t, base+"initLimit=5\nsyncLimit=2\n"+
		"server.3=c:2888:3888\nserver.1=a:2888:3888\nserver.4=d:2888:3888:observer\nserver.2=b:2888:3888\n")
	var ids []int64
	for _, s := range c.Servers {
		ids = append(ids, s.ID)
	}
	if !reflect.DeepEqual(ids, []int64{1, 2, 3, 4}) {
		t.Errorf("server ids = %v, want sorted 1..4", ids)
	}
	if len(c.Voters()) != 3 || !c.Distributed() {
		t.Errorf("Voters = %d, Distributed = %v; want 3, true", len(c.Voters()), c.Distributed())
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	if got := c.Servers[0].QuorumAddr() + " " + c.Servers[0].ElectionAddr(); got != "a:2888 a:3888" {
		t.Errorf("addrs = %q", got)
	}
}

func TestServerCountWarnings(t *testing.T) {
	tests := []struct {
		servers string
		warning string
	}{
		{"server.1=a:1:2\n", "only one server specified"},
		{"server.1=a:1:2\nserver.2=b:1:2\n", "no server failure will be tolerated"},
		{"server.1=a:1:2\nserver.2=b:1:2\nserver.3=c:1:2\nserver.4=d:1:2\n", "consider an odd number"},
	}
	for _, tc := range tests {
		c, warnings := mustParse(t, base+"initLimit=5\nsyncLimit=2\n"+tc.servers)
		if len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning) {
			t.Errorf("%q: warnings = %q, want %q", tc.servers, warnings, tc.warning)
		}
		if got, want := c.Distributed(), len(c.Servers) > 1; got != want {
			t.Errorf("%q: Distributed = %v", tc.servers, got)
		}
	}
}

func TestClientPortOnServerLineOnly(t *testing.T) {
	// No clientPort, but a server line carries one: accepted (ZooKeeper's
	// dynamic-config style).
	c, _ := mustParse(t, "dataDir=/d\ninitLimit=5\nsyncLimit=2\nserver.1=a:1:2;2181\nserver.2=b:1:2;2181\nserver.3=c:1:2;2181\n")
	if c.ClientPort != 0 {
		t.Errorf("ClientPort = %d, want 0", c.ClientPort)
	}
	c.MyID = 2
	if got := c.ClientListenAddr(); got != "127.0.0.1:2181" {
		t.Errorf("ClientListenAddr = %q, want loopback default", got)
	}
}

func TestFourLetterWordEnabled(t *testing.T) {
	c, _ := mustParse(t, base)
	if !c.FourLetterWordEnabled("srvr") || c.FourLetterWordEnabled("ruok") {
		t.Error("default whitelist should enable srvr only")
	}
	c, _ = mustParse(t, base+"4lw.commands.whitelist=ruok, mntr\n")
	if !c.FourLetterWordEnabled("ruok") || !c.FourLetterWordEnabled("mntr") || !c.FourLetterWordEnabled("srvr") || c.FourLetterWordEnabled("stat") {
		t.Errorf("whitelist %q", c.FourLetterWordWhitelist)
	}
	c, _ = mustParse(t, base+"4lw.commands.whitelist=*\n")
	if !c.FourLetterWordEnabled("wchc") {
		t.Error("* should enable everything")
	}
	c.FourLetterWordWhitelist = nil
	if !c.FourLetterWordEnabled("srvr") {
		t.Error("srvr is always enabled")
	}
}

func TestJavaDecode(t *testing.T) {
	ok := map[string]int64{"0": 0, "10": 10, "-10": -10, "+10": 10, "0x1F": 31, "0X1f": 31, "#ff": 255, "-0x10": -16, "017": 15, "00": 0, "-2147483648": -2147483648}
	for in, want := range ok {
		if got, err := javaDecode("k", in, 32); err != nil || got != want {
			t.Errorf("javaDecode(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-", "0x", "#", "08", "0x-1", "--1", "1_000", "2147483648", " 1", "1.0"} {
		if _, err := javaDecode("k", in, 32); err == nil {
			t.Errorf("javaDecode(%q) succeeded", in)
		}
	}
	if got, err := javaDecode("k", "9223372036854775807", 64); err != nil || got != 1<<63-1 {
		t.Errorf("javaDecode(max long) = %d, %v", got, err)
	}
}

// FuzzParse: Parse never panics, and whatever it accepts survives
// WriteZooCfg and Parse unchanged.
func FuzzParse(f *testing.F) {
	f.Add(base)
	f.Add(base + "initLimit=5\nsyncLimit=2\nserver.1=a:1:2;2181\nserver.2=[::1]:3:4:observer;[::1]:2182\nserver.3=c:5:6\n")
	f.Add(base + "4lw.commands.whitelist=ruok, stat\nforceSync=no\nsnapCount=0x10\ndurability=diskless\n")
	f.Add("dataDir=/a b/\\u00e9\nclientPort 2181\nclientPortAddress=[::1]\nsuperDigest=x\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, _, err := Parse(strings.NewReader(in), nil)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := c.WriteZooCfg(&buf); err != nil {
			t.Fatal(err)
		}
		again, _, err := Parse(&buf, nil)
		if err != nil {
			t.Fatalf("re-parse of %q failed: %v", buf.String(), err)
		}
		if !utf8.ValidString(in) {
			return // invalid UTF-8 comes back as U+FFFD
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("round trip changed\n%+v\n%+v", c, again)
		}
	})
}

func TestKVStoreKeys(t *testing.T) {
	cfg := base + "tickTime=2000\ninitLimit=5\nsyncLimit=2\nstore=kv\napiPort=7001\napiPortAddress=0.0.0.0\n" +
		"server.1=a:1:2\nserver.2=b:1:2\nserver.3=c:1:2\napiAddress.1=a:7001\napiAddress.2=b:7001\napiAddress.3=c:7001\n"
	c, _, err := Parse(strings.NewReader(cfg), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if c.Store != "kv" || c.APIListenAddr() != "0.0.0.0:7001" || len(c.APIAddrs) != 3 || c.APIAddrs[2] != "b:7001" {
		t.Fatalf("parsed %q %q %v", c.Store, c.APIListenAddr(), c.APIAddrs)
	}
	var b strings.Builder
	if err := c.WriteZooCfg(&b); err != nil {
		t.Fatal(err)
	}
	c2, _, err := Parse(strings.NewReader(b.String()), slog.New(slog.DiscardHandler))
	if err != nil || c2.Store != "kv" || c2.APIListenAddr() != c.APIListenAddr() || c2.APIAddrs[3] != "c:7001" {
		t.Fatalf("round trip: %v %+v", err, c2)
	}
	for _, bad := range []string{"store=tree\n", "apiPort=70000\n", "apiAddress.x=a:1\n", "apiAddress.1=nohostport\n"} {
		if _, _, err := Parse(strings.NewReader(base+bad), slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestReconfigEnabled: reconfigEnabled=true is accepted without a warning.
func TestReconfigEnabled(t *testing.T) {
	c, warnings, err := Parse(strings.NewReader(base+"reconfigEnabled=true\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.ReconfigEnabled {
		t.Fatal("ReconfigEnabled not set")
	}
	if slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "reconfigEnabled") }) {
		t.Fatalf("warning for reconfigEnabled=true: %q", warnings)
	}
}
