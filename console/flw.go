package console

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// maxFLWReply bounds one four-letter-word answer the console reads. cons
// and wchc grow with connections and watches; past this the answer is cut
// and marked truncated rather than read without bound.
const maxFLWReply = 4 << 20

// flwTimeout bounds one exchange when the caller's context has no sooner
// deadline: a member that is down or frozen must not stall the page.
const flwTimeout = 3 * time.Second

// errTruncated says the answer exceeded maxFLWReply.
var errTruncated = errors.New("four-letter-word answer truncated")

// fourLetter sends word to addr on a new connection and reads the answer
// until the server closes it, as ZooKeeper ends every such answer.
func fourLetter(ctx context.Context, addr, word string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, flwTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if _, err := io.WriteString(nc, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(nc, maxFLWReply+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxFLWReply {
		return string(b[:maxFLWReply]), errTruncated
	}
	return string(b), nil
}

// notServing is what every word but a few prints while the member is not
// serving (electing, or syncing with a leader).
const notServing = "This ZooKeeper instance is not currently serving requests"

// parseMntr turns "zk_<name>\t<value>" lines into name → value, without
// the zk_ prefix.
func parseMntr(s string) map[string]string {
	out := make(map[string]string)
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		out[strings.TrimPrefix(k, "zk_")] = strings.TrimSpace(v)
	}
	return out
}

// srvr is what the srvr word reports.
type srvr struct {
	Version     string
	Mode        string
	Zxid        int64
	LatencyMin  float64
	LatencyAvg  float64
	LatencyMax  float64
	Received    int64
	Sent        int64
	Connections int64
	Outstanding int64
	NodeCount   int64
}

func parseSrvr(s string) (srvr, error) {
	var out srvr
	if strings.HasPrefix(s, notServing) {
		return out, errNotServing
	}
	seen := false
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Zookeeper version":
			out.Version = v
		case "Mode":
			out.Mode, seen = v, true
		case "Zxid":
			z, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
			if err == nil {
				out.Zxid = int64(z)
			}
		case "Latency min/avg/max":
			parts := strings.Split(v, "/")
			if len(parts) == 3 {
				out.LatencyMin, _ = strconv.ParseFloat(parts[0], 64)
				out.LatencyAvg, _ = strconv.ParseFloat(parts[1], 64)
				out.LatencyMax, _ = strconv.ParseFloat(parts[2], 64)
			}
		case "Received":
			out.Received, _ = strconv.ParseInt(v, 10, 64)
		case "Sent":
			out.Sent, _ = strconv.ParseInt(v, 10, 64)
		case "Connections":
			out.Connections, _ = strconv.ParseInt(v, 10, 64)
		case "Outstanding":
			out.Outstanding, _ = strconv.ParseInt(v, 10, 64)
		case "Node count":
			out.NodeCount, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if !seen {
		return out, errors.New("srvr: no Mode line")
	}
	return out, nil
}

var errNotServing = errors.New("not serving (electing or syncing)")

// connection is one line of cons.
type connection struct {
	Remote      string `json:"remote"`
	Queued      int64  `json:"queued"`
	Received    int64  `json:"received"`
	Sent        int64  `json:"sent"`
	SessionID   string `json:"sessionId,omitempty"`
	LastOp      string `json:"lastOp,omitempty"`
	Established int64  `json:"established,omitempty"`
	Timeout     int64  `json:"timeout,omitempty"`
	LastZxid    string `json:"lastZxid,omitempty"`
	LastLatency int64  `json:"lastLatency"`
	MinLatency  int64  `json:"minLatency"`
	AvgLatency  int64  `json:"avgLatency"`
	MaxLatency  int64  `json:"maxLatency"`
}

// parseCons reads cons lines:
//
//	/127.0.0.1:35966[1](queued=0,recved=9,sent=10,sid=0x...,lop=CREA,est=...,to=30000,lcxid=0x5,lzxid=0x35919,lresp=...,llat=1,minlat=0,avglat=0,maxlat=2)
func parseCons(s string) ([]connection, error) {
	if strings.HasPrefix(s, notServing) {
		return nil, errNotServing
	}
	var out []connection
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 64<<10), maxFLWReply)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		open := strings.IndexByte(line, '(')
		if line == "" || open < 0 || !strings.HasSuffix(line, ")") {
			continue
		}
		var c connection
		c.Remote = strings.TrimPrefix(line[:open], "/")
		if i := strings.IndexByte(c.Remote, '['); i >= 0 {
			c.Remote = c.Remote[:i]
		}
		for _, kv := range strings.Split(line[open+1:len(line)-1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "queued":
				c.Queued = n
			case "recved":
				c.Received = n
			case "sent":
				c.Sent = n
			case "sid":
				c.SessionID = v
			case "lop":
				c.LastOp = v
			case "est":
				c.Established = n
			case "to":
				c.Timeout = n
			case "lzxid":
				c.LastZxid = v
			case "llat":
				c.LastLatency = n
			case "minlat":
				c.MinLatency = n
			case "avglat":
				c.AvgLatency = n
			case "maxlat":
				c.MaxLatency = n
			}
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// parseWchs reads "N connections watching M paths\nTotal watches:T".
func parseWchs(s string) (conns, paths, total int64, err error) {
	if strings.HasPrefix(s, notServing) {
		return 0, 0, 0, errNotServing
	}
	lines := strings.Split(s, "\n")
	if len(lines) < 2 {
		return 0, 0, 0, errors.New("wchs: short answer")
	}
	f := strings.Fields(lines[0])
	if len(f) != 5 {
		return 0, 0, 0, errors.New("wchs: unexpected first line")
	}
	conns, _ = strconv.ParseInt(f[0], 10, 64)
	paths, _ = strconv.ParseInt(f[3], 10, 64)
	total, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(lines[1], "Total watches:")), 10, 64)
	return conns, paths, total, nil
}

// parseWchc reads "0x<sid>" lines each followed by "\t<path>" lines, in
// the order given, keeping at most maxPaths paths in all.
func parseWchc(s string, maxPaths int) (sessions []watchSession, truncated bool, err error) {
	if strings.HasPrefix(s, notServing) {
		return nil, false, errNotServing
	}
	kept := 0
	for _, line := range strings.Split(s, "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "\t"):
			if len(sessions) == 0 {
				continue
			}
			last := &sessions[len(sessions)-1]
			last.Count++
			if kept < maxPaths {
				last.Paths = append(last.Paths, line[1:])
				kept++
			} else {
				truncated = true
			}
		default:
			sessions = append(sessions, watchSession{SessionID: line})
		}
	}
	return sessions, truncated, nil
}

type watchSession struct {
	SessionID string   `json:"sessionId"`
	Count     int      `json:"count"`
	Paths     []string `json:"paths"`
}
