package flw

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The regular expressions below are copied from go-zookeeper
// (github.com/go-zookeeper/zk v1.0.4, flw.go, FLWSrvr and FLWCons;
// BSD-3-Clause, Copyright (c) 2013, Samuel Stauffer), the parser most Go
// tools use on srvr and cons.

func goZkSrvrRegexp() *regexp.Regexp {
	const (
		zrVer   = `^Zookeeper version: ([A-Za-z0-9\.\-]+), built on (\d\d/\d\d/\d\d\d\d \d\d:\d\d [A-Za-z0-9:\+\-]+)`
		zrLat   = `^Latency min/avg/max: (\d+)/([0-9.]+)/(\d+)`
		zrNet   = `^Received: (\d+).*\n^Sent: (\d+).*\n^Connections: (\d+).*\n^Outstanding: (\d+)`
		zrState = `^Zxid: (0x[A-Za-z0-9]+).*\n^Mode: (\w+).*\n^Node count: (\d+)`
	)
	return regexp.MustCompile(fmt.Sprintf(`(?m:\A%v.*\n%v.*\n%v.*\n%v)`, zrVer, zrLat, zrNet, zrState))
}

func goZkConsRegexp() *regexp.Regexp {
	const (
		zrAddr = `^ /((?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?):(?:\d+))\[\d+\]`
		zrPac  = `\(queued=(\d+),recved=(\d+),sent=(\d+),sid=(0x[A-Za-z0-9]+),lop=(\w+),est=(\d+),to=(\d+),`
		zrSesh = `lcxid=(0x[A-Za-z0-9]+),lzxid=(0x[A-Za-z0-9]+),lresp=(\d+),llat=(\d+),minlat=(\d+),avglat=(\d+),maxlat=(\d+)\)`
	)
	return regexp.MustCompile(fmt.Sprintf("%v%v%v", zrAddr, zrPac, zrSesh))
}

// TestGoZkCons: every cons line of a connection with a session parses with
// go-zookeeper's FLWCons expression, field for field. Lines without a
// session (the asking 4lw connection) and lines after crst (no lcxid) do
// not match it, exactly as with ZooKeeper; FLWCons then reports failure
// but still returns the parsed clients.
func TestGoZkCons(t *testing.T) {
	re := goZkConsRegexp()
	s := busyState()
	out := string(Render("cons", s, nil))
	sc := bufio.NewScanner(strings.NewReader(out))
	i := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		c := s.Connections[i]
		i++
		m := re.FindStringSubmatch(line)
		if c.SessionID == 0 {
			if m != nil {
				t.Errorf("sessionless line matched: %q", line)
			}
			continue
		}
		if m == nil {
			t.Fatalf("FLWCons regexp does not match %q", line)
		}
		m = m[1:]
		if m[0] != strings.TrimPrefix(JavaSocketAddress(c.Remote), "/") {
			t.Errorf("addr %q, want %q", m[0], c.Remote)
		}
		if m[5] != c.LastOp {
			t.Errorf("lop %q, want %q", m[5], c.LastOp)
		}
		// go-zookeeper parses these with base 0 ("0x" prefix is hex).
		for _, f := range []struct {
			idx  int
			want int64
		}{
			{1, c.Queued}, {2, c.Received}, {3, c.Sent}, {4, c.SessionID},
			{6, c.Established}, {7, int64(c.Timeout)}, {8, c.LastCxid}, {9, c.LastZxid},
			{10, c.LastResponse}, {11, c.LastLatency}, {12, c.MinLatency},
			{13, c.AvgLatency}, {14, c.MaxLatency},
		} {
			u, err := strconv.ParseUint(m[f.idx], 0, 64)
			if err != nil || int64(u) != f.want {
				t.Errorf("field %d = %q, want %d (err %v)", f.idx, m[f.idx], f.want, err)
			}
		}
	}
	if i != len(s.Connections) {
		t.Errorf("%d lines for %d connections", i, len(s.Connections))
	}

	reset := ConnInfo{Remote: "127.0.0.1:1", HasSession: true, SessionID: 5, LastOp: "NA", LastCxid: -1, LastZxid: -1}
	s.Connections = []ConnInfo{reset}
	if line := strings.TrimSpace(string(Render("cons", s, nil))); re.MatchString(" " + line) {
		t.Errorf("line without lcxid matched: %q", line)
	}
}

// TestGoZkSrvr documents that go-zookeeper's FLWSrvr cannot parse
// ZooKeeper 3.9's srvr: its expression wants the 3.4-3.6 build date
// "MM/dd/yyyy HH:mm zz", and 3.9 prints "yyyy-MM-dd HH:mm zz". We print
// what 3.9 prints. The rest of the output does parse: with an old-style
// version string every field comes back.
func TestGoZkSrvr(t *testing.T) {
	re := goZkSrvrRegexp()
	s := busyState()
	if m := re.FindStringSubmatch(string(Render("srvr", s, nil))); m != nil {
		t.Fatalf("FLWSrvr regexp matched a 3.9 version line: %q", m[0])
	}

	s.Version = "3.6.1--1, built on 04/21/2020 15:01 GMT"
	s.Zxid = 0x110a7a8f37
	s.LatencyAvg = 1
	for _, w := range []string{"srvr", "stat"} {
		m := re.FindStringSubmatch(string(Render(w, s, nil)))
		if w == "stat" {
			// The client list sits between the version and latency lines.
			if m != nil {
				t.Errorf("FLWSrvr regexp matched stat output")
			}
			continue
		}
		if m == nil {
			t.Fatalf("FLWSrvr regexp does not match srvr output")
		}
		m = m[1:]
		want := []string{"3.6.1--1", "04/21/2020 15:01 GMT", "0", "1.0", "42", "32", "30", "3", "0", "0x110a7a8f37", "standalone", "9"}
		for i := range want {
			if m[i] != want[i] {
				t.Errorf("srvr field %d = %q, want %q", i, m[i], want[i])
			}
		}
	}
}
