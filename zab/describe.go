package zab

import (
	"fmt"
	"strings"
)

// Describe functions print messages, Ready and state in one stable,
// human-readable form, as etcd-io/raft's DescribeMessage and DescribeReady
// do: the interaction tests (zabtest, testdata/*.txt) compare traces made
// of them, so a change of protocol shows as a diff of those files.
// Sessions are left out (they are random numbers, and a message of a stale
// session is dropped before anything else looks at it).

// EntryFormatter prints an entry's data; nil prints it as a quoted string
// (a configuration change in EncodeMembership's encoding as
// config(voters=[...] observers=[...])).
type EntryFormatter func([]byte) string

func formatData(f EntryFormatter, data []byte) string {
	if f != nil {
		return f(data)
	}
	if m, ok := DecodeMembership(data); ok {
		return fmt.Sprintf("config(%v)", m)
	}
	return fmt.Sprintf("%q", data)
}

// DescribeMembership describes a node's active configuration and the one
// pending in its log, if any.
func DescribeMembership(id uint64, active Membership, pending *Membership) string {
	s := fmt.Sprintf("%d: active %v", id, active)
	if pending != nil {
		s += fmt.Sprintf(" pending %v", *pending)
	}
	return s + "\n"
}

// DescribeEntry describes one entry as "zxid data".
func DescribeEntry(e Entry, f EntryFormatter) string {
	return fmt.Sprintf("%s %s", DescribeZxid(e.Zxid), formatData(f, e.Data))
}

// DescribeEntries describes entries, one per line, each ending in a newline.
func DescribeEntries(ents []Entry, f EntryFormatter) string {
	var b strings.Builder
	for _, e := range ents {
		b.WriteString(DescribeEntry(e, f))
		b.WriteByte('\n')
	}
	return b.String()
}

// DescribeZxid prints a zxid as "epoch:counter".
func DescribeZxid(z Zxid) string {
	return fmt.Sprintf("%d:%d", z.Epoch(), z.Counter())
}

// DescribeMessage describes m with the fields its type uses.
func DescribeMessage(m Message, f EntryFormatter) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d->%d %v", m.From, m.To, m.Type)
	z := DescribeZxid
	switch m.Type {
	case MsgVote:
		fmt.Fprintf(&b, " %v vote=(leader=%d zxid=%s epoch=%d round=%d)", m.State, m.Vote.Leader, z(m.Vote.Zxid), m.Vote.Epoch, m.Vote.Round)
		if m.Epoch != 0 {
			fmt.Fprintf(&b, " handover=%d", m.Epoch)
		}
		if m.NonVoting {
			b.WriteString(" nonvoting")
		}
	case MsgFollowerInfo:
		fmt.Fprintf(&b, " acceptedEpoch=%d", m.Epoch)
		if m.NonVoting {
			b.WriteString(" recovering")
		}
	case MsgLeaderInfo:
		if m.Reject {
			fmt.Fprintf(&b, " reject (%v round=%d)", m.State, m.Vote.Round)
		} else {
			fmt.Fprintf(&b, " epoch=%d", m.Epoch)
		}
	case MsgAckEpoch:
		fmt.Fprintf(&b, " epoch=%d currentEpoch=%d last=%s", m.Epoch, m.CurrentEpoch, z(m.Zxid))
	case MsgSync:
		fmt.Fprintf(&b, " %v %s", m.Sync, z(m.Zxid))
		if m.Snapshot != nil {
			fmt.Fprintf(&b, " snapshot=%s", formatData(f, m.Snapshot.Data))
		}
	case MsgProposal, MsgInform:
		fmt.Fprintf(&b, " prev=%s", z(m.Prev))
		if m.Type == MsgInform {
			fmt.Fprintf(&b, " commit=%s", z(m.Commit))
		}
		b.WriteString(" [")
		for i, e := range m.Entries {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %s", z(e.Zxid), formatData(f, e.Data))
		}
		b.WriteString("]")
	case MsgNewLeader, MsgAckNewLeader:
		fmt.Fprintf(&b, " epoch=%d zxid=%s", m.Epoch, z(m.Zxid))
	case MsgUpToDate, MsgCommit:
		fmt.Fprintf(&b, " commit=%s", z(m.Commit))
	case MsgAck:
		fmt.Fprintf(&b, " zxid=%s", z(m.Zxid))
		if m.Vote.Round != 0 {
			fmt.Fprintf(&b, " confirm=%d", m.Vote.Round)
		}
	case MsgPing:
		fmt.Fprintf(&b, " commit=%s", z(m.Commit))
		if m.Vote.Round != 0 {
			fmt.Fprintf(&b, " confirm=%d", m.Vote.Round)
		}
	case MsgEpochRoll, MsgAckEpochRoll:
		fmt.Fprintf(&b, " epoch=%d", m.Epoch)
	case MsgPeerAck:
		fmt.Fprintf(&b, " epoch=%d zxid=%s", m.Epoch, z(m.Zxid))
	case MsgTimeoutNow:
		fmt.Fprintf(&b, " epoch=%d last=%s", m.Epoch, z(m.Zxid))
		if m.Vote.Leader != 0 {
			fmt.Fprintf(&b, " designated=%d", m.Vote.Leader)
		}
	default:
		fmt.Fprintf(&b, " epoch=%d zxid=%s commit=%s", m.Epoch, z(m.Zxid), z(m.Commit))
	}
	return b.String()
}

// DescribeSoftState describes a SoftState on one line.
func DescribeSoftState(s SoftState) string {
	out := fmt.Sprintf("%v/%v leader=%d epoch=%d", s.State, s.Phase, s.Leader, s.Epoch)
	if s.Recovering {
		out += " recovering"
	}
	if s.Transferee != 0 {
		out += fmt.Sprintf(" transferring-to=%d", s.Transferee)
	}
	return out
}

// DescribeHardState describes a HardState on one line.
func DescribeHardState(hs HardState) string {
	return fmt.Sprintf("acceptedEpoch=%d currentEpoch=%d", hs.AcceptedEpoch, hs.CurrentEpoch)
}

// DescribeReady describes what rd asks of the driver, one item per line.
func DescribeReady(rd Ready, f EntryFormatter) string {
	var b strings.Builder
	if rd.SoftState != nil {
		fmt.Fprintf(&b, "State: %s\n", DescribeSoftState(*rd.SoftState))
	}
	if rd.HardState != nil {
		fmt.Fprintf(&b, "HardState: %s\n", DescribeHardState(*rd.HardState))
	}
	if rd.Snapshot != nil {
		fmt.Fprintf(&b, "Snapshot: %s %s\n", DescribeZxid(rd.Snapshot.Zxid), formatData(f, rd.Snapshot.Data))
	}
	if rd.Truncate != nil {
		fmt.Fprintf(&b, "Truncate: after %s\n", DescribeZxid(*rd.Truncate))
	}
	if len(rd.Entries) > 0 {
		b.WriteString("Entries:\n")
		for _, e := range rd.Entries {
			fmt.Fprintf(&b, "  %s %s\n", DescribeZxid(e.Zxid), formatData(f, e.Data))
		}
	}
	if len(rd.Committed) > 0 {
		b.WriteString("Committed:\n")
		for _, e := range rd.Committed {
			fmt.Fprintf(&b, "  %s %s\n", DescribeZxid(e.Zxid), formatData(f, e.Data))
		}
	}
	if len(rd.Messages) > 0 {
		b.WriteString("Messages:\n")
		for _, m := range rd.Messages {
			fmt.Fprintf(&b, "  %s\n", DescribeMessage(m, f))
		}
	}
	return b.String()
}

// DescribeStatus describes a Status: the node's own line, then one line
// per learner session on a leader.
func DescribeStatus(st Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d: %s %s last=%s persisted=%s commit=%s applied=%s round=%d\n",
		st.ID, DescribeSoftState(st.SoftState), DescribeHardState(st.HardState),
		DescribeZxid(st.LastZxid), DescribeZxid(st.Persisted), DescribeZxid(st.Commit), DescribeZxid(st.Applied), st.Round)
	for _, l := range st.Learners {
		kind := "follower"
		if l.Observer {
			kind = "observer"
		}
		synced := "joining"
		if l.Synced {
			synced = "synced"
		}
		fmt.Fprintf(&b, "  %d: %s %s ack=%s\n", l.ID, kind, synced, DescribeZxid(l.Ack))
	}
	return b.String()
}
