package cli

import (
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// javaDate is java.util.Date.toString's layout ("EEE MMM dd HH:mm:ss zzz
// yyyy"), which zkCli uses for ctime and mtime.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

// writeStat prints a Stat as zkCli's StatPrinter does. Zxids and the
// ephemeral owner are printed as Java's Long.toHexString: unsigned.
func writeStat(w io.Writer, st client.Stat, loc *time.Location) {
	fmt.Fprintf(w, "cZxid = 0x%x\n", uint64(st.Czxid))
	fmt.Fprintf(w, "ctime = %s\n", time.UnixMilli(st.Ctime).In(loc).Format(javaDate))
	fmt.Fprintf(w, "mZxid = 0x%x\n", uint64(st.Mzxid))
	fmt.Fprintf(w, "mtime = %s\n", time.UnixMilli(st.Mtime).In(loc).Format(javaDate))
	fmt.Fprintf(w, "pZxid = 0x%x\n", uint64(st.Pzxid))
	fmt.Fprintf(w, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(w, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(w, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(w, "ephemeralOwner = 0x%x\n", uint64(st.EphemeralOwner))
	fmt.Fprintf(w, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(w, "numChildren = %d\n", st.NumChildren)
}

// formatList is Java's List.toString: "[a, b]". Callers sort first where
// zkCli does.
func formatList(items []string) string {
	return "[" + strings.Join(items, ", ") + "]"
}

// sortedList sorts a copy of names and formats it.
func sortedList(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	return formatList(s)
}

// writeACL prints an ACL list as zkCli's getAcl does: one entry per two
// lines, "'scheme,'id" then ": perms".
func writeACL(w io.Writer, acl []client.ACL) {
	for _, a := range acl {
		fmt.Fprintf(w, "'%s,'%s\n: %s\n", a.ID.Scheme, a.ID.ID, permString(a.Perms))
	}
}

// permString is ZKUtil.getPermString: the letters in the order c, d, r,
// w, a.
func permString(perms int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit    int32
		letter byte
	}{{wire.PermCreate, 'c'}, {wire.PermDelete, 'd'}, {wire.PermRead, 'r'}, {wire.PermWrite, 'w'}, {wire.PermAdmin, 'a'}} {
		if perms&p.bit != 0 {
			b.WriteByte(p.letter)
		}
	}
	return b.String()
}

// dataFormat selects how get prints data (-b, -x, or plain).
type dataFormat int

const (
	formatPlain dataFormat = iota
	formatBase64
	formatHex
)

// formatData renders node data as zkCli's get does. Null data (a node
// created without any) is the text "null" in every format, as in zkCli.
func formatData(data []byte, f dataFormat) string {
	if data == nil {
		data = []byte("null")
	}
	switch f {
	case formatBase64:
		return base64.StdEncoding.EncodeToString(data)
	case formatHex:
		return hexDump(data)
	}
	return string(data)
}

// hexDump is the table zkCli's "get -x" prints (Netty's prettyHexDump):
// 16 bytes a row, offset, hex bytes and their printable ASCII. Empty data
// is the empty string.
func hexDump(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	const (
		border = "+--------+-------------------------------------------------+----------------+"
		head   = "         +-------------------------------------------------+\n" +
			"         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |\n" + border
	)
	var b strings.Builder
	b.WriteString(head)
	for off := 0; off < len(data); off += 16 {
		row := data[off:min(off+16, len(data))]
		fmt.Fprintf(&b, "\n|%08x|", uint32(off))
		for i := range 16 {
			if i < len(row) {
				fmt.Fprintf(&b, " %02x", row[i])
			} else {
				b.WriteString("   ")
			}
		}
		b.WriteString(" |")
		for i := range 16 {
			switch {
			case i >= len(row):
				b.WriteByte(' ')
			case row[i] <= 0x1f || row[i] >= 0x7f:
				b.WriteByte('.')
			default:
				b.WriteByte(row[i])
			}
		}
		b.WriteByte('|')
	}
	b.WriteString("\n" + border)
	return b.String()
}

// stateName is the Java client's Watcher.Event.KeeperState name.
func stateName(s client.State) string {
	switch s {
	case client.StateConnected:
		return "SyncConnected"
	case client.StateDisconnected:
		return "Disconnected"
	case client.StateExpired:
		return "Expired"
	case client.StateAuthFailed:
		return "AuthFailed"
	case client.StateClosed:
		return "Closed"
	}
	return s.String()
}

// eventTypeName is the Java client's Watcher.Event.EventType name.
func eventTypeName(t client.EventType) string {
	if t == client.EventSession {
		return "None"
	}
	return t.String()
}

// formatEvent is what zkCli's default watcher prints for an event: a
// blank line, "WATCHER::", a blank line, then WatchedEvent.toString. The
// path of a session event is "null" and a zxid the client made up (0) is
// -1, as in Java.
func formatEvent(ev client.Event) string {
	path := ev.Path
	if ev.Type == client.EventSession || path == "" {
		path = "null"
	}
	zxid := ev.Zxid
	if zxid == 0 {
		zxid = -1
	}
	state := ev.State
	if ev.Type != client.EventSession && state == 0 {
		state = client.StateConnected
	}
	return fmt.Sprintf("\nWATCHER::\n\nWatchedEvent state:%s type:%s path:%s zxid: %d\n",
		stateName(state), eventTypeName(ev.Type), path, zxid)
}

// promptState is the ZooKeeper.States name zkCli shows in its prompt.
func promptState(c *client.Conn) string {
	if c == nil {
		return "CLOSED"
	}
	switch c.State() {
	case client.StateConnected:
		return "CONNECTED"
	case client.StateDisconnected:
		return "CONNECTING"
	case client.StateAuthFailed:
		return "AUTH_FAILED"
	}
	return "CLOSED"
}
