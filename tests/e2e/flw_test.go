package e2e

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
	"github.com/corral-db/corral/wire"
)

// The version line of srvr/stat and envi's zookeeper.version: 3.9 prints
// "3.9.3-<hash>, built on yyyy-MM-dd HH:mm zz"; corral prints its own
// version in the same shape.
const versionRe = `\d+\.\d+\.\d+\S*, built on \d{4}-\d\d-\d\d \d\d:\d\d \S+`

// clientRe is one connection line of stat/cons without a session.
const clientRe = ` /127\.0\.0\.1:\d+\[[0-9a-f]+\]\(queued=\d+,recved=\d+,sent=\d+\)`

// TestFourLetterWords checks every four-letter word's output shape
// (PROTOCOL §14.2) on a fresh server with one known session: one
// ephemeral and one data watch, so the counts are exact.
func TestFourLetterWords(t *testing.T) {
	srv := env.Start(t)
	r := harness.DialSession(t, srv.Addr(), 30000)
	r.Create2("/flw", nil, openACL, 0)
	r.Create2("/flw/e", nil, openACL, wire.ModeEphemeral)
	r.GetData("/flw", true)
	r.GetChildren("/flw", true) // child watches are not listed by wch*
	sid := fmt.Sprintf("0x%x", r.SessionID)
	_, last, _ := r.Exists("/", false)
	zxid := fmt.Sprintf("0x%x", last.Zxid)

	exact := func(word, want string) {
		t.Helper()
		if got := srv.MustFourLetter(word); got != want {
			t.Errorf("%s = %q, want %q", word, got, want)
		}
	}
	matches := func(word, re string) string {
		t.Helper()
		got := srv.MustFourLetter(word)
		if !regexp.MustCompile(`\A` + re + `\z`).MatchString(got) {
			t.Errorf("%s output does not match %s:\n%s", word, re, got)
		}
		return got
	}

	exact("ruok", "imok")
	exact("isro", "rw")
	exact("wchs", "1 connections watching 1 paths\nTotal watches:1\n")
	exact("wchc", sid+"\n\t/flw\n\n")
	exact("wchp", "/flw\n\t"+sid+"\n\n")

	srvrRe := `Zookeeper version: ` + versionRe + `\n` +
		`Latency min/avg/max: \d+/\d+\.\d+/\d+\n` +
		`Received: \d+\nSent: \d+\nConnections: \d+\nOutstanding: \d+\n` +
		`Zxid: ` + zxid + `\nMode: standalone\nNode count: 7\n`
	matches("srvr", srvrRe)
	stat := matches("stat", `Zookeeper version: `+versionRe+`\nClients:\n(?:`+clientRe+`\n)+\n`+
		strings.TrimPrefix(srvrRe, `Zookeeper version: `+versionRe+`\n`))
	if !strings.Contains(stat, fmt.Sprintf(":%d[", localPort(r))) {
		t.Errorf("stat does not list the session's connection (port %d):\n%s", localPort(r), stat)
	}

	// cons: the 4lw connection itself (short form) and the session (long form).
	sessRe := ` /127\.0\.0\.1:` + strconv.Itoa(localPort(r)) + `\[[0-9a-f]+\]\(queued=\d+,recved=\d+,sent=\d+,sid=` + sid +
		`,lop=\w+,est=\d+,to=30000,lcxid=0x[0-9a-f]+,lzxid=0x[0-9a-f]+,lresp=\d+,llat=\d+,minlat=\d+,avglat=\d+,maxlat=\d+\)`
	cons := matches("cons", `(?:(?:`+clientRe+`|`+sessRe+`)\n)+\n`)
	if !regexp.MustCompile(`(?m)^` + sessRe + `$`).MatchString(cons) {
		t.Errorf("cons has no long-form line for session %s:\n%s", sid, cons)
	}

	mntr := srv.MustFourLetter("mntr")
	metrics := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(mntr, "\n"), "\n") {
		k, v, ok := strings.Cut(line, "\t")
		// Keys are zk_<name>; ZooKeeper also adds per-top-level-znode
		// summaries (zk_avg_<node>_read_per_namespace, ...) that carry the
		// node name's own characters, so only the prefix is fixed.
		if !ok || !strings.HasPrefix(k, "zk_") || len(k) == 3 || strings.Contains(v, "\t") {
			t.Errorf("mntr line %q is not zk_<key>\\t<value>", line)
			continue
		}
		metrics[k] = v
	}
	for _, k := range []string{"zk_avg_latency", "zk_max_latency", "zk_min_latency", "zk_packets_received",
		"zk_packets_sent", "zk_num_alive_connections", "zk_outstanding_requests", "zk_approximate_data_size",
		"zk_open_file_descriptor_count", "zk_max_file_descriptor_count", "zk_uptime", "zk_global_sessions",
		"zk_local_sessions", "zk_connection_drop_probability", "zk_last_client_response_size",
		"zk_max_client_response_size", "zk_min_client_response_size", "zk_outstanding_tls_handshake",
		"zk_auth_failed_count", "zk_non_mtls_remote_conn_count", "zk_non_mtls_local_conn_count"} {
		if _, ok := metrics[k]; !ok {
			t.Errorf("mntr lacks %s", k)
		}
	}
	for k, want := range map[string]string{"zk_server_state": "standalone", "zk_znode_count": "7",
		"zk_ephemerals_count": "1", "zk_watch_count": "2"} {
		if metrics[k] != want {
			t.Errorf("mntr %s = %q, want %q", k, metrics[k], want)
		}
	}
	if !regexp.MustCompile(`^` + versionRe + `$`).MatchString(metrics["zk_version"]) {
		t.Errorf("mntr zk_version = %q", metrics["zk_version"])
	}

	conf := srv.MustFourLetter("conf")
	confKeys := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(conf, "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("conf line %q is not key=value", line)
		}
		confKeys[k] = v
	}
	for k, want := range map[string]string{"clientPort": strconv.Itoa(srv.Port), "secureClientPort": "-1",
		"tickTime": "2000", "maxClientCnxns": "0", "minSessionTimeout": "4000", "maxSessionTimeout": "40000",
		"serverId": "0"} {
		if confKeys[k] != want {
			t.Errorf("conf %s = %q, want %q", k, confKeys[k], want)
		}
	}
	for _, k := range []string{"dataDir", "dataLogDir"} {
		if !strings.HasPrefix(confKeys[k], srv.DataDir) {
			t.Errorf("conf %s = %q, want under %s", k, confKeys[k], srv.DataDir)
		}
	}
	for _, k := range []string{"dataDirSize", "dataLogSize", "clientPortListenBacklog"} {
		if _, err := strconv.ParseInt(confKeys[k], 10, 64); err != nil {
			t.Errorf("conf %s = %q, want an integer", k, confKeys[k])
		}
	}

	envi := matches("envi", `Environment:\n(?:[\w.]+=.*\n)+`)
	if !regexp.MustCompile(`(?m)^zookeeper\.version=` + versionRe + `$`).MatchString(envi) {
		t.Errorf("envi has no zookeeper.version line:\n%s", envi)
	}
	for _, k := range []string{"host.name", "java.version", "os.name", "user.dir", "os.memory.free"} {
		if !strings.Contains(envi, "\n"+k+"=") {
			t.Errorf("envi lacks %s", k)
		}
	}

	dump := srv.MustFourLetter("dump")
	for _, part := range []string{"SessionTracker dump:\n", "ephemeral nodes dump:\n",
		"Sessions with Ephemerals (1):\n" + sid + ":\n\t/flw/e\n", "Connections dump:\n"} {
		if !strings.Contains(dump, part) {
			t.Errorf("dump lacks %q:\n%s", part, dump)
		}
	}
	if !regexp.MustCompile(`(?m)^\t` + sid + `$`).MatchString(dump) {
		t.Errorf("dump does not list session %s:\n%s", sid, dump)
	}

	matches("dirs", `datadir_size: \d+\nlogdir_size: \d+\n`)
	// hash lists "<hex zxid>: <digest>" entries; a standalone server may
	// have none.
	matches("hash", `(?:[0-9a-f]+: ?-?\d+\n)*`)
	matches("gtmk", `\d+`)
	exact("srst", "Server stats reset.\n")
	exact("crst", "Connection stats reset.\n")

	// Bytes after the word are ignored.
	if out, err := harness.FourLetterBytes(srv.Addr(), []byte("ruok\n")); err != nil || out != "imok" {
		t.Errorf("ruok with newline = %q, %v", out, err)
	}
	// Four bytes that are no word and no plausible length: closed, nothing written.
	if out, _ := harness.FourLetterBytes(srv.Addr(), []byte("xxxx")); out != "" {
		t.Errorf("xxxx = %q, want nothing", out)
	}
	// After the handshake a word is a bogus frame length: connection closed.
	r2 := harness.DialSession(t, srv.Addr(), 30000)
	if _, err := r2.Conn.Write([]byte("ruok")); err != nil {
		t.Fatal(err)
	}
	if frames := r2.ExpectClosed(); len(frames) != 0 {
		t.Errorf("ruok on a session got %d frames", len(frames))
	}
}

// TestRestrictedConfig runs a server with a 4lw whitelist and a per-IP
// connection limit of 2.
func TestRestrictedConfig(t *testing.T) {
	srv := env.StartWith(t, harness.Config{MaxClientCnxns: 2, Whitelist: "srvr, ruok"})

	if out := srv.MustFourLetter("ruok"); out != "imok" {
		t.Errorf("whitelisted ruok = %q", out)
	}
	for _, w := range []string{"stat", "mntr", "cons"} {
		want := w + " is not executed because it is not in the whitelist.\n"
		if out := srv.MustFourLetter(w); out != want {
			t.Errorf("%s = %q, want %q", w, out, want)
		}
	}

	// Connections count per IP, four-letter-word ones included: wait until
	// the start-up probes are gone and srvr's own connection is the only one.
	testutil.Eventually(t, eventTimeout, "no other connections", func() bool {
		return strings.Contains(srv.MustFourLetter("srvr"), "\nConnections: 1\n")
	})
	a := harness.DialSession(t, srv.Addr(), 30000)
	b := harness.DialSession(t, srv.Addr(), 30000)
	// The third concurrent connection from 127.0.0.1 is accepted and closed
	// at once, with nothing sent.
	c := harness.Dial(t, srv.Addr())
	f := false
	if _, err := c.Connect(harness.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), ReadOnly: &f}); err == nil || !harness.IsClosed(err) {
		t.Errorf("third connection: err %v, want it closed", err)
	}
	// The first two keep working; closing one makes room.
	if _, p, _ := a.Exists("/", false); p.Err != wire.CodeOK {
		t.Errorf("first connection: %v", p.Err)
	}
	b.Call(wire.OpCloseSession, nil)
	b.ExpectClosed()
	var d *harness.Raw
	testutil.Eventually(t, eventTimeout, "a new connection after one closed", func() bool {
		d = harness.Dial(t, srv.Addr())
		_, err := d.Connect(harness.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), ReadOnly: &f})
		return err == nil
	})
	if _, p, _ := d.Exists("/", false); p.Err != wire.CodeOK {
		t.Errorf("replacement connection: %v", p.Err)
	}
}

func localPort(r *harness.Raw) int { return r.Conn.LocalAddr().(*net.TCPAddr).Port }
