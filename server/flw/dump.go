package flw

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"time"
)

// renderDump is DumpCommand: SessionTrackerImpl.dumpSessions,
// DataTree.dumpEphemerals and NIOServerCnxnFactory.dumpConnections.
//
//	SessionTracker dump:
//	Session Sets (3)/(2):
//	0 expire at Sun Nov 22 02:29:46 UTC 2026:
//	1 expire at Sun Nov 22 02:29:50 UTC 2026:
//	\t0x100000772ee0000
//	ephemeral nodes dump:
//	Sessions with Ephemerals (1):
//	0x100000772ee0000:
//	\t/e2
//	Connections dump:
//	Connections Sets (1)/(1):
//	1 expire at Sun Nov 22 02:29:58 UTC 2026:
//	\tip: /127.0.0.1:42862 sessionId: 0x100000772ee0000
func renderDump(b *bytes.Buffer, s *State) {
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}

	b.WriteString("SessionTracker dump:\nSession ")
	sessions := slices.Clone(s.SessionExpiries)
	slices.SortStableFunc(sessions, func(x, y SessionExpiry) int { return cmp.Compare(x.ExpireAt, y.ExpireAt) })
	n := 0
	for _, e := range sessions {
		n += len(e.Sessions)
	}
	writeSets(b, len(sessions), n)
	for _, e := range sessions {
		writeBucket(b, len(e.Sessions), e.ExpireAt, loc)
		for _, sid := range e.Sessions {
			b.WriteString("\t0x")
			b.WriteString(javaHex(sid))
			b.WriteByte('\n')
		}
	}

	b.WriteString("ephemeral nodes dump:\nSessions with Ephemerals (")
	b.WriteString(strconv.Itoa(len(s.Ephemerals)))
	b.WriteString("):\n")
	for _, sid := range sortedSessions(s.Ephemerals) {
		b.WriteString("0x")
		b.WriteString(javaHex(sid))
		b.WriteString(":\n")
		for _, p := range s.Ephemerals[sid] {
			b.WriteByte('\t')
			b.WriteString(p)
			b.WriteByte('\n')
		}
	}

	b.WriteString("Connections dump:\nConnections ")
	conns := slices.Clone(s.ConnectionExpiries)
	slices.SortStableFunc(conns, func(x, y ConnExpiry) int { return cmp.Compare(x.ExpireAt, y.ExpireAt) })
	n = 0
	for _, e := range conns {
		n += len(e.Conns)
	}
	writeSets(b, len(conns), n)
	for _, e := range conns {
		writeBucket(b, len(e.Conns), e.ExpireAt, loc)
		for _, c := range e.Conns {
			// NIOServerCnxn.toString.
			b.WriteString("\tip: ")
			b.WriteString(JavaSocketAddress(c.Remote))
			b.WriteString(" sessionId: 0x")
			b.WriteString(javaHex(c.SessionID))
			b.WriteByte('\n')
		}
	}
}

// writeSets and writeBucket are ExpiryQueue.dump's header and bucket lines.
func writeSets(b *bytes.Buffer, buckets, elems int) {
	b.WriteString("Sets (")
	b.WriteString(strconv.Itoa(buckets))
	b.WriteString(")/(")
	b.WriteString(strconv.Itoa(elems))
	b.WriteString("):\n")
}

func writeBucket(b *bytes.Buffer, size int, expireAt int64, loc *time.Location) {
	b.WriteString(strconv.Itoa(size))
	b.WriteString(" expire at ")
	b.WriteString(JavaDate(expireAt, loc))
	b.WriteString(":\n")
}
