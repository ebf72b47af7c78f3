package flw

import (
	"bytes"
	"strconv"
)

// renderStat is StatCommand: srvr, and stat (withClients) which inserts
// the short connection list after the version lines.
func renderStat(b *bytes.Buffer, s *State, withClients bool) {
	b.WriteString("Zookeeper version: ")
	b.WriteString(s.Version)
	b.WriteByte('\n')
	if s.ReadOnly {
		b.WriteString("READ-ONLY mode; serving only read-only clients\n")
	}
	if withClients {
		b.WriteString("Clients:\n")
		for i := range s.Connections {
			writeConn(b, &s.Connections[i], true)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	// ServerStats.toString.
	b.WriteString("Latency min/avg/max: ")
	b.WriteString(strconv.FormatInt(s.LatencyMin, 10))
	b.WriteByte('/')
	b.WriteString(FormatDouble(round4(s.LatencyAvg)))
	b.WriteByte('/')
	b.WriteString(strconv.FormatInt(s.LatencyMax, 10))
	b.WriteString("\nReceived: ")
	b.WriteString(strconv.FormatInt(s.Received, 10))
	b.WriteString("\nSent: ")
	b.WriteString(strconv.FormatInt(s.Sent, 10))
	b.WriteString("\nConnections: ")
	b.WriteString(strconv.Itoa(len(s.Connections)))
	b.WriteString("\nOutstanding: ")
	b.WriteString(strconv.FormatInt(s.Outstanding, 10))
	b.WriteString("\nZxid: 0x")
	b.WriteString(javaHex(s.Zxid))
	b.WriteString("\nMode: ")
	b.WriteString(s.Mode)
	b.WriteString("\nNode count: ")
	b.WriteString(strconv.Itoa(s.NodeCount))
	b.WriteByte('\n')
	if s.Mode == "leader" {
		// BufferStats starts at -1/-1/-1 and prints "%d/%d/%d".
		p := [3]int64{-1, -1, -1}
		if s.ProposalSizes != nil {
			p = *s.ProposalSizes
		}
		b.WriteString("Proposal sizes last/min/max: ")
		b.WriteString(strconv.FormatInt(p[0], 10))
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(p[1], 10))
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(p[2], 10))
		b.WriteByte('\n')
	}
}

// renderCons is ConsCommand: the long form of every connection, one per
// line, then an empty line.
func renderCons(b *bytes.Buffer, s *State) {
	for i := range s.Connections {
		writeConn(b, &s.Connections[i], false)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

// writeConn is ServerCnxn.dumpConnectionInfo, without the line end: a
// space, then
//
//	/127.0.0.1:35966[1](queued=0,recved=9,sent=10,sid=0x...,lop=CREA,est=...,to=30000,lcxid=0x5,lzxid=0x35919,lresp=...,llat=1,minlat=0,avglat=0,maxlat=2)
//
// brief (stat) stops after sent=; so does a connection without a session.
func writeConn(b *bytes.Buffer, c *ConnInfo, brief bool) {
	b.WriteByte(' ')
	b.WriteString(JavaSocketAddress(c.Remote))
	b.WriteByte('[')
	if c.InterestOps == 0 {
		b.WriteByte('0')
	} else {
		b.WriteString(strconv.FormatUint(uint64(uint32(c.InterestOps)), 16))
	}
	b.WriteString("](queued=")
	b.WriteString(strconv.FormatInt(c.Queued, 10))
	b.WriteString(",recved=")
	b.WriteString(strconv.FormatInt(c.Received, 10))
	b.WriteString(",sent=")
	b.WriteString(strconv.FormatInt(c.Sent, 10))
	if !brief && (c.HasSession || c.SessionID != 0) {
		b.WriteString(",sid=0x")
		b.WriteString(javaHex(c.SessionID))
		b.WriteString(",lop=")
		b.WriteString(c.LastOp)
		b.WriteString(",est=")
		b.WriteString(strconv.FormatInt(c.Established, 10))
		b.WriteString(",to=")
		b.WriteString(strconv.FormatInt(int64(c.Timeout), 10))
		if c.LastCxid >= 0 {
			b.WriteString(",lcxid=0x")
			b.WriteString(javaHex(c.LastCxid))
		}
		b.WriteString(",lzxid=0x")
		b.WriteString(javaHex(c.LastZxid))
		b.WriteString(",lresp=")
		b.WriteString(strconv.FormatInt(c.LastResponse, 10))
		b.WriteString(",llat=")
		b.WriteString(strconv.FormatInt(c.LastLatency, 10))
		b.WriteString(",minlat=")
		b.WriteString(strconv.FormatInt(c.MinLatency, 10))
		b.WriteString(",avglat=")
		b.WriteString(strconv.FormatInt(c.AvgLatency, 10))
		b.WriteString(",maxlat=")
		b.WriteString(strconv.FormatInt(c.MaxLatency, 10))
	}
	b.WriteByte(')')
}

// renderRecovering is srvr on a recovering member (State.Recovering):
// ZooKeeper's "not serving" line, so tools that look for it still find
// it, then what the operator needs to decide on a forced recovery.
func renderRecovering(b *bytes.Buffer, s *State) {
	b.WriteString(notServing)
	b.WriteString("\nRecovering: restarted from a partial snapshot; waits for a synchronized leader " +
		"(after a crash of a majority: corral server -force-recover, see docs/design/diskless.md)")
	b.WriteString("\nZxid: 0x")
	b.WriteString(javaHex(s.Zxid))
	// looking whatever its zab role: a recovering member that already
	// follows a leader in discovery or sync still serves nobody, and
	// tools (the test harness among them) read "Mode: follower" as
	// serving.
	b.WriteString("\nMode: looking\n")
}
