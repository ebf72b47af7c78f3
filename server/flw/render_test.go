package flw

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/wire"
)

// The golden outputs below were captured from Apache ZooKeeper 3.9.3
// (standalone, 4lw.commands.whitelist=*) with two go-zookeeper sessions.
// Where ZooKeeper's order comes from a Java hash map (wchc, wchp, the
// ephemerals in dump) the lines are shown in the sorted order this package
// uses; everything else is byte for byte what ZooKeeper wrote.

const v393 = "3.9.3-c26634f34490bb0ea7a09cc51e05ede3b4e320ee, built on 2024-10-17 23:21 UTC"

const (
	sid0 int64 = 0x100000772ee0000
	sid1 int64 = 0x100000772ee0001
)

func utcMillis(y int, mo time.Month, d, h, mi, s int) int64 {
	return time.Date(y, mo, d, h, mi, s, 0, time.UTC).UnixMilli()
}

// freshState is a standalone server just started, asked by its third 4lw
// connection (after ruok and isro).
func freshState() *State {
	return &State{
		Version:     v393,
		Mode:        "standalone",
		Serving:     true,
		Received:    3,
		Sent:        2,
		Connections: []ConnInfo{{Remote: "127.0.0.1:54972", Received: 1}},
		NodeCount:   5,
		Config: []KV{
			{"clientPort", "21899"},
			{"secureClientPort", "-1"},
			{"dataDir", "/tmp/zkref/data/version-2"},
			{"dataDirSize", "478"},
			{"dataLogDir", "/tmp/zkref/data/version-2"},
			{"dataLogSize", "478"},
			{"tickTime", "2000"},
			{"maxClientCnxns", "60"},
			{"minSessionTimeout", "4000"},
			{"maxSessionTimeout", "40000"},
			{"clientPortListenBacklog", "-1"},
			{"serverId", "0"},
		},
		DataDirSize: 478,
		LogDirSize:  478,
		TraceMask:   306,
		ConnectionExpiries: []ConnExpiry{{
			ExpireAt: utcMillis(2026, time.November, 22, 2, 29, 38),
			Conns:    []ConnRef{{Remote: "127.0.0.1:55024"}},
		}},
	}
}

// busyState has two sessions with watches and ephemerals.
func busyState() *State {
	s := freshState()
	s.LatencyMin, s.LatencyAvg, s.LatencyMax = 0, 290.0/34, 42 // printed 8.5294
	s.Received, s.Sent = 32, 30
	s.Zxid = 6
	s.NodeCount = 9
	s.Connections = []ConnInfo{
		{
			Remote: "127.0.0.1:42870", InterestOps: 1, Received: 6, Sent: 6,
			HasSession: true, SessionID: sid1, LastOp: "GETC",
			Established: 1795314575341, Timeout: 30000, LastCxid: 5, LastZxid: 6,
			LastResponse: 507923, LastLatency: 7, MinLatency: 0, AvgLatency: 14, MaxLatency: 42,
		},
		{
			Remote: "127.0.0.1:42862", InterestOps: 1, Received: 11, Sent: 11,
			HasSession: true, SessionID: sid0, LastOp: "PING",
			Established: 1795314575339, Timeout: 10000, LastCxid: 9, LastZxid: 6,
			LastResponse: 510205, LastLatency: 0, MinLatency: 0, AvgLatency: 5, MaxLatency: 30,
		},
		{Remote: "127.0.0.1:47982", Received: 1},
	}
	s.Watches = WatchInfo{
		BySession: map[int64][]string{
			sid1: {"/a", "/nope"},
			sid0: {"/a", "/e2"},
		},
		Connections: 2, Paths: 3, Total: 4,
	}
	s.Ephemerals = map[int64][]string{
		sid1: {"/a/e1"},
		sid0: {"/e2", "/e3"},
	}
	s.SessionExpiries = []SessionExpiry{
		{ExpireAt: utcMillis(2026, time.November, 22, 2, 30, 6), Sessions: []int64{sid1}},
		{ExpireAt: utcMillis(2026, time.November, 22, 2, 29, 46)},
		{ExpireAt: utcMillis(2026, time.November, 22, 2, 29, 50), Sessions: []int64{sid0}},
	}
	s.SessionCount = 2
	s.ConnectionExpiries = []ConnExpiry{
		{ExpireAt: utcMillis(2026, time.November, 22, 2, 29, 48)},
		{ExpireAt: utcMillis(2026, time.November, 22, 2, 29, 58), Conns: []ConnRef{
			{Remote: "127.0.0.1:42862", SessionID: sid0},
			{Remote: "127.0.0.1:48032"},
		}},
		{ExpireAt: utcMillis(2026, time.November, 22, 2, 30, 8), Conns: []ConnRef{
			{Remote: "127.0.0.1:42870", SessionID: sid1},
		}},
	}
	return s
}

func TestGolden(t *testing.T) {
	hashState := freshState()
	hashState.Digest = []DigestEntry{{0x80, 269147045385}, {0x100, 525839698426}}
	afterReset := freshState()
	afterReset.Connections = []ConnInfo{{
		Remote: "127.0.0.1:55004", InterestOps: 1, HasSession: true, SessionID: 0x100000772ee0003,
		LastOp: "NA", Established: 1795314642778, Timeout: 10000, LastCxid: -1, LastZxid: -1,
	}}
	stmkState := freshState()
	stmkState.TraceMask = 818

	tests := []struct {
		name, word string
		s          *State
		want       string
	}{
		{"ruok", "ruok", freshState(), "imok"},
		{"isro", "isro", freshState(), "rw"},
		{"srvr fresh", "srvr", freshState(), "Zookeeper version: " + v393 + "\n" +
			"Latency min/avg/max: 0/0.0/0\nReceived: 3\nSent: 2\nConnections: 1\n" +
			"Outstanding: 0\nZxid: 0x0\nMode: standalone\nNode count: 5\n"},
		{"stat fresh", "stat", freshState(), "Zookeeper version: " + v393 + "\n" +
			"Clients:\n /127.0.0.1:54972[0](queued=0,recved=1,sent=0)\n\n" +
			"Latency min/avg/max: 0/0.0/0\nReceived: 3\nSent: 2\nConnections: 1\n" +
			"Outstanding: 0\nZxid: 0x0\nMode: standalone\nNode count: 5\n"},
		{"cons fresh", "cons", freshState(), " /127.0.0.1:54972[0](queued=0,recved=1,sent=0)\n\n"},
		{"wchs fresh", "wchs", freshState(), "0 connections watching 0 paths\nTotal watches:0\n"},
		{"wchc fresh", "wchc", freshState(), "\n"},
		{"wchp fresh", "wchp", freshState(), "\n"},
		{"conf", "conf", freshState(), "clientPort=21899\nsecureClientPort=-1\n" +
			"dataDir=/tmp/zkref/data/version-2\ndataDirSize=478\n" +
			"dataLogDir=/tmp/zkref/data/version-2\ndataLogSize=478\ntickTime=2000\n" +
			"maxClientCnxns=60\nminSessionTimeout=4000\nmaxSessionTimeout=40000\n" +
			"clientPortListenBacklog=-1\nserverId=0\n"},
		{"dump fresh", "dump", freshState(), "SessionTracker dump:\nSession Sets (0)/(0):\n" +
			"ephemeral nodes dump:\nSessions with Ephemerals (0):\nConnections dump:\n" +
			"Connections Sets (1)/(1):\n1 expire at Sun Nov 22 02:29:38 UTC 2026:\n" +
			"\tip: /127.0.0.1:55024 sessionId: 0x0\n"},
		{"dirs", "dirs", freshState(), "datadir_size: 478\nlogdir_size: 478\n"},
		{"gtmk", "gtmk", freshState(), "306"},
		{"stmk", "stmk", stmkState, "818"},
		{"crst", "crst", freshState(), "Connection stats reset.\n"},
		{"srst", "srst", freshState(), "Server stats reset.\n"},
		{"hash empty", "hash", freshState(), ""},
		{"hash", "hash", hashState, "80: 269147045385\n100: 525839698426\n"},

		{"srvr busy", "srvr", busyState(), "Zookeeper version: " + v393 + "\n" +
			"Latency min/avg/max: 0/8.5294/42\nReceived: 32\nSent: 30\nConnections: 3\n" +
			"Outstanding: 0\nZxid: 0x6\nMode: standalone\nNode count: 9\n"},
		{"stat busy", "stat", busyState(), "Zookeeper version: " + v393 + "\nClients:\n" +
			" /127.0.0.1:42870[1](queued=0,recved=6,sent=6)\n" +
			" /127.0.0.1:42862[1](queued=0,recved=11,sent=11)\n" +
			" /127.0.0.1:47982[0](queued=0,recved=1,sent=0)\n\n" +
			"Latency min/avg/max: 0/8.5294/42\nReceived: 32\nSent: 30\nConnections: 3\n" +
			"Outstanding: 0\nZxid: 0x6\nMode: standalone\nNode count: 9\n"},
		{"cons busy", "cons", busyState(),
			" /127.0.0.1:42870[1](queued=0,recved=6,sent=6,sid=0x100000772ee0001,lop=GETC,est=1795314575341,to=30000,lcxid=0x5,lzxid=0x6,lresp=507923,llat=7,minlat=0,avglat=14,maxlat=42)\n" +
				" /127.0.0.1:42862[1](queued=0,recved=11,sent=11,sid=0x100000772ee0000,lop=PING,est=1795314575339,to=10000,lcxid=0x9,lzxid=0x6,lresp=510205,llat=0,minlat=0,avglat=5,maxlat=30)\n" +
				" /127.0.0.1:47982[0](queued=0,recved=1,sent=0)\n\n"},
		{"cons after crst", "cons", afterReset,
			" /127.0.0.1:55004[1](queued=0,recved=0,sent=0,sid=0x100000772ee0003,lop=NA,est=1795314642778,to=10000,lzxid=0xffffffffffffffff,lresp=0,llat=0,minlat=0,avglat=0,maxlat=0)\n\n"},
		{"wchs busy", "wchs", busyState(), "2 connections watching 3 paths\nTotal watches:4\n"},
		{"wchc busy", "wchc", busyState(),
			"0x100000772ee0000\n\t/a\n\t/e2\n0x100000772ee0001\n\t/a\n\t/nope\n\n"},
		{"wchp busy", "wchp", busyState(),
			"/a\n\t0x100000772ee0000\n\t0x100000772ee0001\n/e2\n\t0x100000772ee0000\n/nope\n\t0x100000772ee0001\n\n"},
		{"dump busy", "dump", busyState(), "SessionTracker dump:\nSession Sets (3)/(2):\n" +
			"0 expire at Sun Nov 22 02:29:46 UTC 2026:\n" +
			"1 expire at Sun Nov 22 02:29:50 UTC 2026:\n\t0x100000772ee0000\n" +
			"1 expire at Sun Nov 22 02:30:06 UTC 2026:\n\t0x100000772ee0001\n" +
			"ephemeral nodes dump:\nSessions with Ephemerals (2):\n" +
			"0x100000772ee0000:\n\t/e2\n\t/e3\n0x100000772ee0001:\n\t/a/e1\n" +
			"Connections dump:\nConnections Sets (3)/(3):\n" +
			"0 expire at Sun Nov 22 02:29:48 UTC 2026:\n" +
			"2 expire at Sun Nov 22 02:29:58 UTC 2026:\n" +
			"\tip: /127.0.0.1:42862 sessionId: 0x100000772ee0000\n" +
			"\tip: /127.0.0.1:48032 sessionId: 0x0\n" +
			"1 expire at Sun Nov 22 02:30:08 UTC 2026:\n" +
			"\tip: /127.0.0.1:42870 sessionId: 0x100000772ee0001\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := Render(tc.word, tc.s, map[string]bool{"*": true})
			if out == nil {
				t.Fatalf("Render(%q) = nil for a known word", tc.word)
			}
			if got := string(out); got != tc.want {
				t.Errorf("Render(%q):\ngot  %q\nwant %q", tc.word, out, tc.want)
			}
		})
	}
}

func TestMntr(t *testing.T) {
	s := freshState()
	s.Metrics = []Metric{
		{"version", v393},
		{"server_state", "standalone"},
		{"ephemerals_count", 3},
		{"num_alive_connections", int32(3)},
		{"avg_latency", RoundAvg(290, 34)},
		{"outstanding_requests", int64(0)},
		{"connection_drop_probability", 0.0},
		{"uptime", uint64(23030)},
		{"missing", nil},
		{"flag", true},
		{"f32", float32(0.1)},
	}
	s.Metrics = append(s.Metrics, Summary("proposal_process_time", 17, 13, 0, 5)...)
	s.Metrics = append(s.Metrics, Summary("dbinittime", 1, 14, 14, 14)...)
	s.Metrics = append(s.Metrics, Summary("a_read_per_namespace", 8, 569, 71, 72)...)
	s.Metrics = append(s.Metrics, Summary("socket_closing_time", 0, 0, 0, 0)...)
	want := "zk_version\t" + v393 + "\n" +
		"zk_server_state\tstandalone\n" +
		"zk_ephemerals_count\t3\n" +
		"zk_num_alive_connections\t3\n" +
		"zk_avg_latency\t8.5294\n" +
		"zk_outstanding_requests\t0\n" +
		"zk_connection_drop_probability\t0.0\n" +
		"zk_uptime\t23030\n" +
		"zk_missing\tnull\n" +
		"zk_flag\ttrue\n" +
		"zk_f32\t0.10000000149011612\n" +
		// The following lines are verbatim from ZooKeeper 3.9.3's mntr.
		"zk_avg_proposal_process_time\t0.7647\nzk_min_proposal_process_time\t0\n" +
		"zk_max_proposal_process_time\t5\nzk_cnt_proposal_process_time\t17\n" +
		"zk_sum_proposal_process_time\t13\n" +
		"zk_avg_dbinittime\t14.0\nzk_min_dbinittime\t14\nzk_max_dbinittime\t14\n" +
		"zk_cnt_dbinittime\t1\nzk_sum_dbinittime\t14\n" +
		"zk_avg_a_read_per_namespace\t71.125\nzk_min_a_read_per_namespace\t71\n" +
		"zk_max_a_read_per_namespace\t72\nzk_cnt_a_read_per_namespace\t8\n" +
		"zk_sum_a_read_per_namespace\t569\n" +
		"zk_avg_socket_closing_time\t0.0\nzk_min_socket_closing_time\t0\n" +
		"zk_max_socket_closing_time\t0\nzk_cnt_socket_closing_time\t0\n" +
		"zk_sum_socket_closing_time\t0\n"
	if got := string(Render("mntr", s, nil)); got != want {
		t.Errorf("mntr:\ngot  %q\nwant %q", got, want)
	}
}

func TestEnvi(t *testing.T) {
	s := freshState()
	s.Serving = false // envi prints regardless
	s.Env = []KV{
		{"zookeeper.version", v393},
		{"host.name", "localhost"},
		{"java.version", "17.0.15"},
		{"java.compiler", "<NA>"},
		{"os.memory.total", "388MB"},
	}
	want := "Environment:\nzookeeper.version=" + v393 + "\nhost.name=localhost\n" +
		"java.version=17.0.15\njava.compiler=<NA>\nos.memory.total=388MB\n"
	if got := string(Render("envi", s, nil)); got != want {
		t.Errorf("envi:\ngot  %q\nwant %q", got, want)
	}
}

func TestLeaderAndReadOnly(t *testing.T) {
	s := freshState()
	s.Mode = "leader"
	got := string(Render("srvr", s, nil))
	if !strings.HasSuffix(got, "Node count: 5\nProposal sizes last/min/max: -1/-1/-1\n") {
		t.Errorf("leader without proposals: %q", got)
	}
	s.ProposalSizes = &[3]int64{36, 32, 120}
	got = string(Render("stat", s, nil))
	if !strings.HasSuffix(got, "Node count: 5\nProposal sizes last/min/max: 36/32/120\n") {
		t.Errorf("leader: %q", got)
	}

	s = freshState()
	s.Mode, s.ReadOnly = "read-only", true
	want := "Zookeeper version: " + v393 + "\nREAD-ONLY mode; serving only read-only clients\n" +
		"Latency min/avg/max: 0/0.0/0\nReceived: 3\nSent: 2\nConnections: 1\n" +
		"Outstanding: 0\nZxid: 0x0\nMode: read-only\nNode count: 5\n"
	if got := string(Render("srvr", s, nil)); got != want {
		t.Errorf("read-only srvr:\ngot  %q\nwant %q", got, want)
	}
	if got := string(Render("isro", s, nil)); got != "ro" {
		t.Errorf("isro on a read-only server = %q, want ro", got)
	}
}

func TestQuorumConf(t *testing.T) {
	s := freshState()
	s.Config = []KV{
		{"serverId", "1"},
		{"peerType", "0"},
		{"", "membership: \n"},
		{"", "server.1=127.0.0.1:2888:3888:participant\nversion=100000000"},
	}
	want := "serverId=1\npeerType=0\nmembership: \nserver.1=127.0.0.1:2888:3888:participant\nversion=100000000"
	if got := string(Render("conf", s, nil)); got != want {
		t.Errorf("conf:\ngot  %q\nwant %q", got, want)
	}
}

func TestNotServing(t *testing.T) {
	s := busyState()
	s.Serving = false
	s.Env = []KV{{"zookeeper.version", v393}}
	const msg = "This ZooKeeper instance is not currently serving requests"
	want := map[string]string{
		"ruok": "imok",
		"isro": "null",
		"gtmk": "306",
		"stmk": "306",
		"envi": "Environment:\nzookeeper.version=" + v393 + "\n",
		"hash": msg, // DigestCommand prints it without a newline
		"conf": msg + "\n", "cons": msg + "\n", "crst": msg + "\n", "dirs": msg + "\n",
		"dump": msg + "\n", "srst": msg + "\n", "srvr": msg + "\n", "stat": msg + "\n",
		"wchc": msg + "\n", "wchp": msg + "\n", "wchs": msg + "\n", "mntr": msg + "\n",
		wire.TelnetClose: "",
	}
	for w, exp := range want {
		if got := string(Render(w, s, nil)); got != exp {
			t.Errorf("not serving, %q: got %q, want %q", w, got, exp)
		}
	}
	if len(want) != len(words) {
		t.Errorf("checked %d words, ZooKeeper knows %d", len(want), len(words))
	}
}

// TestRecoveringAnswersSrvrAndMntr: a recovering member (corral's own
// state) is not serving, yet srvr and mntr say what the operator needs;
// every other word keeps ZooKeeper's "not serving" answer.
func TestRecoveringAnswersSrvrAndMntr(t *testing.T) {
	s := busyState()
	s.Serving = false
	s.Recovering = true
	s.Mode = "looking"
	s.Zxid = 0x200000031
	s.Metrics = []Metric{{Name: "server_state", Value: "looking"}, {Name: "recovering", Value: 1}}
	const msg = "This ZooKeeper instance is not currently serving requests"
	srvr := string(Render("srvr", s, nil))
	if !strings.HasPrefix(srvr, msg+"\nRecovering: ") || !strings.Contains(srvr, "\nZxid: 0x200000031\nMode: looking\n") ||
		!strings.Contains(srvr, "-force-recover") {
		t.Errorf("srvr while recovering: %q", srvr)
	}
	// A recovering member already following a leader (discovery, sync)
	// still serves nobody: srvr must not say follower.
	s.Mode = "follower"
	if srvr := string(Render("srvr", s, nil)); !strings.Contains(srvr, "\nMode: looking\n") {
		t.Errorf("srvr of a recovering follower: %q, want Mode: looking", srvr)
	}
	if got, want := string(Render("mntr", s, nil)), "zk_server_state\tlooking\nzk_recovering\t1\n"; got != want {
		t.Errorf("mntr while recovering: got %q, want %q", got, want)
	}
	for _, w := range []string{"stat", "cons", "dump", "conf", "wchs"} {
		if got := string(Render(w, s, nil)); got != msg+"\n" {
			t.Errorf("%s while recovering: got %q, want the not-serving line", w, got)
		}
	}
	// Serving again (synchronized), srvr is ZooKeeper's.
	s.Serving, s.Recovering = true, false
	if got := string(Render("srvr", s, nil)); strings.Contains(got, "Recovering") {
		t.Errorf("srvr once serving: %q", got)
	}
}

func TestWhitelist(t *testing.T) {
	s := freshState()
	// ZooKeeper's default: nothing listed, srvr implied.
	def := map[string]bool{}
	for _, w := range []string{"ruok", "stat", "cons", "isro", "hash", "stmk", "mntr"} {
		want := w + " is not executed because it is not in the whitelist.\n"
		if got := string(Render(w, s, def)); got != want {
			t.Errorf("default whitelist, %s: got %q, want %q", w, got, want)
		}
		if Allowed(w, def) {
			t.Errorf("Allowed(%q, default) = true", w)
		}
	}
	if got := string(Render(wire.TelnetClose, s, def)); got != "telnet close is not executed because it is not in the whitelist.\n" {
		t.Errorf("telnet close, default whitelist: %q", got)
	}
	if !Allowed("srvr", def) || !strings.HasPrefix(string(Render("srvr", s, def)), "Zookeeper version: ") {
		t.Error("srvr must always be allowed")
	}

	// "ruok, stat" (as parsed by the server).
	some := map[string]bool{"ruok": true, "stat": true}
	if got := string(Render("ruok", s, some)); got != "imok" {
		t.Errorf("ruok listed: %q", got)
	}
	if !Allowed("stat", some) || Allowed("cons", some) {
		t.Error("listed/unlisted words")
	}
	// The whitelist wins over "not serving".
	s.Serving = false
	if got := string(Render("cons", s, some)); got != "cons is not executed because it is not in the whitelist.\n" {
		t.Errorf("unlisted word on a non-serving server: %q", got)
	}

	for _, wl := range []map[string]bool{nil, {"*": true}, {"*": true, "ruok": false}} {
		for _, w := range words {
			if !Allowed(w, wl) {
				t.Errorf("Allowed(%q, %v) = false", w, wl)
			}
		}
		if !Allowed(wire.TelnetClose, wl) {
			t.Errorf("telnet close not allowed by %v", wl)
		}
	}

	// Unknown words are never allowed and render nothing.
	for _, w := range []string{"xxxx", "icfg", "", "SRVR"} {
		if Allowed(w, nil) || Render(w, s, nil) != nil {
			t.Errorf("unknown word %q allowed or rendered", w)
		}
	}
}

func TestWatchSummaryDerived(t *testing.T) {
	s := busyState()
	s.Watches.Connections, s.Watches.Paths, s.Watches.Total = 0, 0, 0
	s.Watches.BySession[7] = nil // a session with no watches is not counted
	if got := string(Render("wchs", s, nil)); got != "2 connections watching 3 paths\nTotal watches:4\n" {
		t.Errorf("derived wchs: %q", got)
	}
	if got := string(Render("wchc", s, nil)); strings.Contains(got, "0x7\n") {
		t.Errorf("wchc lists a session without watches: %q", got)
	}
}

func TestNilState(t *testing.T) {
	// A nil state is a server that is not serving; nothing panics.
	for _, w := range words {
		_ = Render(w, nil, nil)
	}
	if got := string(Render("srvr", nil, nil)); got != notServing+"\n" {
		t.Errorf("srvr with nil state: %q", got)
	}
}
