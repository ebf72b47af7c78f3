package config

// Differential tests against Apache ZooKeeper 3.9.3 itself: the same files
// are read by java.util.Properties / QuorumPeerConfig (testdata/ZkProbe.java,
// one JVM for the whole test) and by this package, and the results must
// agree. Skipped when java or the jars fetched by
// scripts/zookeeper/fetch.sh are missing, and with -short.

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// zooKeeperLib returns the directory of ZooKeeper's jars or skips t.
func zooKeeperLib(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting a JVM")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java not installed")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	lib := filepath.Join(dir, ".cache", "zookeeper", "lib")
	if _, err := os.Stat(filepath.Join(lib, ".complete")); err != nil {
		t.Skipf("ZooKeeper jars not fetched (%s); run scripts/zookeeper/fetch.sh", lib)
	}
	return lib
}

// runProbe runs ZkProbe over args ("props:FILE" or "qpc:FILE") and returns
// its output lines per file.
func runProbe(t *testing.T, lib string, args []string) map[string][]string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "ZkProbe.java"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "probe.out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-cp", lib + "/*", src, out}, args...)...)
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("java ZkProbe: %v\n%s", err, log)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := map[string][]string{}
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "FILE "):
			cur = strings.TrimPrefix(line, "FILE ")
			res[cur] = []string{}
		case line == "END":
			cur = ""
		default:
			res[cur] = append(res[cur], line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return res
}

func hexOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return hex.EncodeToString([]byte(s))
}

// zkCase is a zoo.cfg (with {dir} standing for its data directory) and the
// myid to put there; wantErr says both ZooKeeper and corral refuse it.
type zkCase struct {
	cfg, myid string // myid "" means no myid file
	myidDir   string // where myid goes, relative to {dir}
	emptyMyID bool   // an empty myid file
	wantErr   bool
}

func zkCases(t *testing.T) map[string]zkCase {
	m := map[string]zkCase{}
	for name, c := range roundTripConfigs("{dir}") {
		var sb strings.Builder
		if err := c.WriteZooCfg(&sb); err != nil {
			t.Fatal(err)
		}
		myid := ""
		if c.Distributed() {
			myid = strconv.FormatInt(max(c.MyID, 1), 10)
		}
		m["written/"+name] = zkCase{cfg: sb.String(), myid: myid, myidDir: strings.TrimPrefix(c.DataDir, "{dir}")}
	}
	const b = "dataDir={dir}\nclientPort=2181\n"
	const ens = "initLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\nserver.3=127.0.0.1:2890:3890\n"
	accept := map[string]zkCase{
		"sample":          {cfg: "# zoo_sample.cfg\ntickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir={dir}\nclientPort=2181\n#maxClientCnxns=60\n#autopurge.snapRetainCount=3\n#autopurge.purgeInterval=1\n"},
		"colon and space": {cfg: "dataDir : {dir}\nclientPort 2181\ntickTime:2000   \n"},
		"continuation":    {cfg: b + "tickTime=20\\\n    00\n"},
		"jvm-only keys":   {cfg: b + "sslQuorum=false\nadmin.enableServer=false\nmetricsProvider.className=org.apache.zookeeper.metrics.impl.DefaultMetricsProvider\nserverCnxnFactory=org.apache.zookeeper.server.NIOServerCnxnFactory\n"},
		"clamped retain":  {cfg: b + "autopurge.snapRetainCount=1\nautopurge.purgeInterval=1\n"},
		"unset timeouts":  {cfg: b + "minSessionTimeout=-1\nmaxSessionTimeout=-1\n"},
		"ensemble":        {cfg: b + ens, myid: "2\n"},
		"observer":        {cfg: b + ens + "server.4=127.0.0.1:2891:3891:observer\n", myid: "4"},
		"client on lines": {cfg: "dataDir={dir}\ninitLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889;2182\nserver.3=[::1]:2890:3890;[::1]:2183\n", myid: "1"},
		"wildcard static": {cfg: "dataDir={dir}\nclientPort=2182\ninitLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889;2182\nserver.3=127.0.0.1:2890:3890\n", myid: "2"},
		"single server":   {cfg: b + "server.1=127.0.0.1:2888:3888\n", myid: "1"},
		"sysprops":        {cfg: b + "snapCount=0x100\n4lw.commands.whitelist= ruok , stat\nforceSync=no\nglobalOutstandingLimit=10\nextendedTypesEnabled=true\nDigestAuthenticationProvider.superDigest=super\\:abc=\n"},
		"one-node quorum": {cfg: b + "standaloneEnabled=false\ninitLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888\n", myid: "1"},
		"no myid alone":   {cfg: b},
		"trailing colon":  {cfg: b + "initLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888:\nserver.2=127.0.0.1:2889:3889;\nserver.3=127.0.0.1:2890:3890\n", myid: "3"},
	}
	reject := map[string]zkCase{
		"no dataDir":              {cfg: "clientPort=2181\n"},
		"bad tickTime":            {cfg: b + "tickTime=abc\n"},
		"zero tickTime":           {cfg: b + "tickTime=0\n"},
		"bad clientPort":          {cfg: "dataDir={dir}\nclientPort=21x\n"},
		"min over max":            {cfg: b + "minSessionTimeout=5000\nmaxSessionTimeout=4000\n"},
		"bad boolean":             {cfg: b + "standaloneEnabled=yes\n"},
		"electionAlg 1":           {cfg: b + "electionAlg=1\n"},
		"bad peerType":            {cfg: b + "peerType=leader\n"},
		"address without port":    {cfg: "dataDir={dir}\nclientPortAddress=127.0.0.1\n"},
		"ensemble without myid":   {cfg: b + ens},
		"malformed myid":          {cfg: b, myid: "abc\n"},
		"empty myid":              {cfg: b, emptyMyID: true},
		"ensemble no initLimit":   {cfg: b + "syncLimit=2\nserver.1=a:1:2\nserver.2=b:1:2\n", myid: "1"},
		"ensemble no syncLimit":   {cfg: b + "initLimit=2\nserver.1=a:1:2\nserver.2=b:1:2\n", myid: "1"},
		"short server line":       {cfg: b + "initLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888\nserver.2=127.0.0.1:2889:3889\n", myid: "2"},
		"same quorum/election":    {cfg: b + "initLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:2888\nserver.2=127.0.0.1:2889:3889\n", myid: "2"},
		"bad peer type on line":   {cfg: b + "initLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888:leader\nserver.2=127.0.0.1:2889:3889\n", myid: "2"},
		"multi address":           {cfg: b + "initLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888|127.0.0.2:2888:3888\nserver.2=127.0.0.1:2889:3889\n", myid: "2"},
		"two client parts":        {cfg: b + "initLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888;2181;2182\nserver.2=127.0.0.1:2889:3889\n", myid: "2"},
		"bad server id":           {cfg: b + "initLimit=5\nsyncLimit=2\nserver.x=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\n", myid: "2"},
		"observers only":          {cfg: b + "server.1=127.0.0.1:2888:3888:observer\n"},
		"observer w/o quorum":     {cfg: b + "server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889:observer\n", myid: "1"},
		"no participants":         {cfg: b + "standaloneEnabled=false\n"},
		"client address mismatch": {cfg: "dataDir={dir}\nclientPort=2181\ninitLimit=5\nsyncLimit=2\nserver.1=127.0.0.1:2888:3888;2182\nserver.2=127.0.0.1:2889:3889\n", myid: "1"},
		"bad unicode escape":      {cfg: b + "a=\\u00zz\n"},
	}
	for k, v := range accept {
		m["accept/"+k] = v
	}
	for k, v := range reject {
		v.wantErr = true
		m["reject/"+k] = v
	}
	return m
}

func TestAgainstZooKeeper(t *testing.T) {
	lib := zooKeeperLib(t)
	tmp := t.TempDir()
	var args []string

	propFiles := map[string]string{}
	for i, tc := range propertiesCases {
		path := filepath.Join(tmp, fmt.Sprintf("props%d.properties", i))
		if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
			t.Fatal(err)
		}
		propFiles[tc.name] = path
		args = append(args, "props:"+path)
	}

	cases := zkCases(t)
	cfgFiles := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		tc := cases[name]
		dir := filepath.Join(tmp, fmt.Sprintf("cfg%d", len(cfgFiles)))
		dataDir := filepath.Join(dir, "data")
		cfg := strings.ReplaceAll(tc.cfg, "{dir}", escapeProperty(dataDir, false))
		if tc.myid != "" || tc.emptyMyID {
			writeMyID(t, filepath.Join(dataDir, tc.myidDir), tc.myid)
		}
		path := filepath.Join(dir, "zoo.cfg")
		writeFile(t, path, []byte(cfg))
		cfgFiles[name] = path
		args = append(args, "qpc:"+path)
	}

	res := runProbe(t, lib, args)

	t.Run("properties", func(t *testing.T) {
		for _, tc := range propertiesCases {
			path := propFiles[tc.name]
			props, err := readProperties(strings.NewReader(tc.in))
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			last := map[string]string{}
			for _, p := range props {
				last[p.Key] = p.Value
			}
			var ours []string
			for k, v := range last {
				ours = append(ours, "P "+hexOrDash(k)+" "+hexOrDash(v))
			}
			slices.Sort(ours)
			theirs := res[path]
			slices.Sort(theirs)
			if !slices.Equal(ours, theirs) {
				t.Errorf("%s (%q): ours %q, java.util.Properties %q", tc.name, tc.in, ours, theirs)
			}
		}
	})

	t.Run("QuorumPeerConfig", func(t *testing.T) {
		for name, path := range cfgFiles {
			tc := cases[name]
			theirs := res[path]
			zkErr := len(theirs) > 0 && strings.HasPrefix(theirs[0], "ERROR")
			c, _, err := Load(path, nil)
			if tc.wantErr {
				if !zkErr {
					t.Errorf("%s: ZooKeeper accepted it: %q", name, theirs)
				}
				if err == nil {
					t.Errorf("%s: corral accepted it", name)
				} else if zkErr {
					t.Logf("%s:\n  corral:    %v\n  ZooKeeper: %s", name, err, theirs[0])
				}
				continue
			}
			if zkErr {
				t.Errorf("%s: ZooKeeper refused it: %s\n%s", name, theirs[0], tc.cfg)
				continue
			}
			if err != nil {
				t.Errorf("%s: corral refused it: %v", name, err)
				continue
			}
			var sys []string
			theirs = slices.DeleteFunc(slices.Clone(theirs), func(l string) bool {
				if strings.HasPrefix(l, "sys ") {
					sys = append(sys, l)
					return true
				}
				return false
			})
			if ours := zkView(c); !slices.Equal(ours, theirs) {
				t.Errorf("%s: views differ\n ours   %q\n theirs %q", name, ours, theirs)
			}
			checkSysProps(t, name, c, sys)
		}
	})
}

// zkView renders c the way ZkProbe prints a QuorumPeerConfig.
func zkView(c *Config) []string {
	itoa := strconv.Itoa
	btoa := strconv.FormatBool
	addr := func(host string, port int) string {
		if host == "" {
			host = "0.0.0.0"
		}
		return javaHost(host) + "|" + itoa(port)
	}
	// ZooKeeper's setupClientPort: our server line's client address wins.
	client := "-"
	if c.ClientPort != 0 {
		client = addr(c.ClientPortAddress, c.ClientPort)
	}
	if s := c.Self(); s != nil && s.ClientPort != 0 {
		client = addr(s.ClientAddr, s.ClientPort)
	}
	serverID := "-1"
	if c.MyID != 0 {
		serverID = strconv.FormatInt(c.MyID, 10)
	}
	v := []string{
		"tickTime " + itoa(c.TickTime),
		"initLimit " + itoa(c.InitLimit),
		"syncLimit " + itoa(c.SyncLimit),
		"dataDir " + c.DataDir,
		"dataLogDir " + c.DataLogDir,
		"clientPortAddress " + client,
		"maxClientCnxns " + itoa(c.MaxClientCnxns),
		"minSessionTimeout " + itoa(c.MinSessionTimeout),
		"maxSessionTimeout " + itoa(c.MaxSessionTimeout),
		"snapRetainCount " + itoa(c.AutopurgeSnapRetainCount),
		"purgeInterval " + itoa(c.AutopurgePurgeInterval),
		"syncEnabled " + btoa(c.SyncEnabled),
		"quorumListenOnAllIPs " + btoa(c.QuorumListenOnAllIPs),
		"standaloneEnabled " + btoa(c.StandaloneEnabled),
		"reconfigEnabled " + btoa(c.ReconfigEnabled),
		"serverId " + serverID,
		"distributed " + btoa(c.Distributed()),
	}
	for _, s := range c.Servers {
		typ := "participant"
		if s.Observer {
			typ = "observer"
		}
		cl := "-"
		if s.ClientPort != 0 {
			cl = addr(s.ClientAddr, s.ClientPort)
		}
		v = append(v, fmt.Sprintf("server %d %s %d %d %s %s", s.ID, javaHost(s.Host), s.QuorumPort, s.ElectionPort, typ, cl))
	}
	return v
}

// checkSysProps checks that the zookeeper.* system properties ZooKeeper
// set from the file mean what c says. Values are compared by meaning, read
// with ZooKeeper's rules, so that snapCount=0x100 and 256 agree.
func checkSysProps(t *testing.T, name string, c *Config, lines []string) {
	t.Helper()
	if len(lines) != 7 {
		t.Errorf("%s: %d sys lines, want 7: %q", name, len(lines), lines)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Errorf("%s: bad probe line %q", name, l)
			continue
		}
		key, set := f[1], f[2] != "-"
		raw, _ := hex.DecodeString(f[2])
		v := string(raw)
		var ok bool
		switch key {
		case "snapCount":
			n, err := javaDecode(key, v, 32)
			ok = (!set && c.SnapCount == DefaultSnapCount) || (err == nil && max(int(n), MinSnapCount) == c.SnapCount)
		case "forceSync":
			ok = c.ForceSync == (v != "no") || c.Durability != DurabilitySync
		case "globalOutstandingLimit":
			n, err := javaDecode(key, v, 32)
			ok = (!set && c.GlobalOutstandingLimit == DefaultGlobalOutstandingLimit) || (err == nil && int(n) == c.GlobalOutstandingLimit)
		case "4lw.commands.whitelist":
			ok = (!set && slices.Equal(c.FourLetterWordWhitelist, defaultFourLetterWords)) || slices.Equal(parseWhitelist(v), c.FourLetterWordWhitelist)
		case "extendedTypesEnabled":
			ok = c.ExtendedTypesEnabled == strings.EqualFold(v, "true")
		case "DigestAuthenticationProvider.superDigest":
			ok = c.SuperDigest == v
		case "durability":
			ok = !set || Durability(v) == c.Durability
		default:
			t.Errorf("%s: unexpected probe line %q", name, l)
			continue
		}
		if !ok {
			t.Errorf("%s: ZooKeeper has zookeeper.%s=%q, corral %+v", name, key, v, c)
		}
	}
}

// javaHost spells an IPv6 literal as Java's Inet6Address does
// (0:0:0:0:0:0:0:1); other hosts are unchanged.
func javaHost(h string) string {
	a, err := netip.ParseAddr(h)
	if err != nil || !a.Is6() {
		return h
	}
	b := a.As16()
	var groups []string
	for i := 0; i < 16; i += 2 {
		groups = append(groups, strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	return strings.Join(groups, ":")
}
