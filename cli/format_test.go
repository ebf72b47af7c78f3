package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// The golden texts in these tests were printed by ZooKeeper 3.9.3's
// zkCli.sh (ZooKeeperMain) for the same values.

func TestWriteStatGolden(t *testing.T) {
	ctime := time.Date(2026, 11, 22, 3, 25, 58, 123e6, time.UTC).UnixMilli()
	st := client.Stat{Czxid: 3, Ctime: ctime, Mzxid: 3, Mtime: ctime, Pzxid: 7,
		Cversion: 3, Version: 0, Aversion: 0, EphemeralOwner: 0, DataLength: 5, NumChildren: 3}
	var b bytes.Buffer
	writeStat(&b, st, time.UTC)
	want := `cZxid = 0x3
ctime = Sun Nov 22 03:25:58 UTC 2026
mZxid = 0x3
mtime = Sun Nov 22 03:25:58 UTC 2026
pZxid = 0x7
cversion = 3
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x0
dataLength = 5
numChildren = 3
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// Java prints longs with Long.toHexString (unsigned) and days of the
// month with two digits.
func TestWriteStatUnsignedHexAndPaddedDay(t *testing.T) {
	mtime := time.Date(2024, 1, 5, 9, 4, 3, 0, time.UTC).UnixMilli()
	st := client.Stat{Czxid: 0x100000002, Mzxid: -1, Ctime: 0, Mtime: mtime, Pzxid: 0x1a,
		Cversion: -1, Version: 7, Aversion: 2, EphemeralOwner: 0x1000a2b3c4d0000, DataLength: 0, NumChildren: 0}
	var b bytes.Buffer
	writeStat(&b, st, time.UTC)
	want := `cZxid = 0x100000002
ctime = Thu Jan 01 00:00:00 UTC 1970
mZxid = 0xffffffffffffffff
mtime = Fri Jan 05 09:04:03 UTC 2024
pZxid = 0x1a
cversion = -1
dataVersion = 7
aclVersion = 2
ephemeralOwner = 0x1000a2b3c4d0000
dataLength = 0
numChildren = 0
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteACLGolden(t *testing.T) {
	acl := []client.ACL{
		{Perms: wire.PermAll &^ wire.PermWrite, ID: client.ID{Scheme: "world", ID: "anyone"}},
		{Perms: wire.PermRead, ID: client.ID{Scheme: "ip", ID: "127.0.0.1"}},
		{Perms: wire.PermRead | wire.PermWrite, ID: client.ID{Scheme: "digest", ID: "u:h"}},
		{Perms: wire.PermCreate | wire.PermDelete, ID: client.ID{Scheme: "digest", ID: "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="}},
		{Perms: 0, ID: client.ID{Scheme: "world", ID: "anyone"}},
	}
	var b bytes.Buffer
	writeACL(&b, acl)
	want := `'world,'anyone
: cdra
'ip,'127.0.0.1
: r
'digest,'u:h
: rw
'digest,'u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ=
: cd
'world,'anyone
: 
`
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestPermStringOrder(t *testing.T) {
	for perms, want := range map[int32]string{
		wire.PermAll: "cdrwa", wire.PermRead: "r", wire.PermAdmin | wire.PermRead: "ra",
		wire.PermWrite | wire.PermCreate: "cw", 0: "",
	} {
		if got := permString(perms); got != want {
			t.Errorf("permString(%d) = %q, want %q", perms, got, want)
		}
	}
}

func TestSortedList(t *testing.T) {
	in := []string{"zookeeper", "a", "n10", "n2", "B"}
	if got, want := sortedList(in), "[B, a, n10, n2, zookeeper]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if in[0] != "zookeeper" {
		t.Fatal("sortedList sorted its argument in place")
	}
	if got := sortedList(nil); got != "[]" {
		t.Fatalf("empty list = %q, want []", got)
	}
}

func TestFormatData(t *testing.T) {
	cases := []struct {
		data []byte
		f    dataFormat
		want string
	}{
		{[]byte("hello"), formatPlain, "hello"},
		{nil, formatPlain, "null"},
		{[]byte{}, formatPlain, ""},
		{[]byte("hello"), formatBase64, "aGVsbG8="},
		{nil, formatBase64, "bnVsbA=="},
		{[]byte{}, formatHex, ""},
		{[]byte("hello"), formatHex, `         +-------------------------------------------------+
         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |
+--------+-------------------------------------------------+----------------+
|00000000| 68 65 6c 6c 6f                                  |hello           |
+--------+-------------------------------------------------+----------------+`},
		{append([]byte{0, 1, 2, 0xff}, "test data longer than 16 bytes!"...), formatHex, `         +-------------------------------------------------+
         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |
+--------+-------------------------------------------------+----------------+
|00000000| 00 01 02 ff 74 65 73 74 20 64 61 74 61 20 6c 6f |....test data lo|
|00000010| 6e 67 65 72 20 74 68 61 6e 20 31 36 20 62 79 74 |nger than 16 byt|
|00000020| 65 73 21                                        |es!             |
+--------+-------------------------------------------------+----------------+`},
		{nil, formatHex, `         +-------------------------------------------------+
         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |
+--------+-------------------------------------------------+----------------+
|00000000| 6e 75 6c 6c                                     |null            |
+--------+-------------------------------------------------+----------------+`},
	}
	for _, c := range cases {
		if got := formatData(c.data, c.f); got != c.want {
			t.Errorf("formatData(%q, %d) =\n%s\nwant\n%s", c.data, c.f, got, c.want)
		}
	}
}

func TestFormatEventGolden(t *testing.T) {
	cases := []struct {
		ev   client.Event
		want string
	}{
		{client.Event{Type: client.EventSession, State: client.StateConnected},
			"WatchedEvent state:SyncConnected type:None path:null zxid: -1"},
		{client.Event{Type: client.EventSession, State: client.StateClosed},
			"WatchedEvent state:Closed type:None path:null zxid: -1"},
		{client.Event{Type: client.EventSession, State: client.StateDisconnected},
			"WatchedEvent state:Disconnected type:None path:null zxid: -1"},
		{client.Event{Type: client.EventNodeChildrenChanged, State: client.StateConnected, Path: "/h", Zxid: 101},
			"WatchedEvent state:SyncConnected type:NodeChildrenChanged path:/h zxid: 101"},
		{client.Event{Type: client.EventNodeCreated, State: client.StateConnected, Path: "/h/z", Zxid: 103},
			"WatchedEvent state:SyncConnected type:NodeCreated path:/h/z zxid: 103"},
		{client.Event{Type: client.EventDataWatchRemoved, Path: "/h"},
			"WatchedEvent state:SyncConnected type:DataWatchRemoved path:/h zxid: -1"},
		{client.Event{Type: client.EventPersistentWatchRemoved, State: client.StateConnected, Path: "/h"},
			"WatchedEvent state:SyncConnected type:PersistentWatchRemoved path:/h zxid: -1"},
	}
	for _, c := range cases {
		want := "\nWATCHER::\n\n" + c.want + "\n"
		if got := formatEvent(c.ev); got != want {
			t.Errorf("formatEvent(%+v) = %q, want %q", c.ev, got, want)
		}
	}
}

func TestZKMessage(t *testing.T) {
	cases := []struct {
		err  error
		path string
		want string
	}{
		{wire.CodeNoNode, "/nope", "Node does not exist: /nope"},
		{wire.CodeNodeExists, "/a", "Node already exists: /a"},
		{wire.CodeNotEmpty, "/a", "Node not empty: /a"},
		{wire.CodeBadVersion, "/b", "version No is not valid : /b"},
		{wire.CodeNoAuth, "/c", "Insufficient permission : /c"},
		{wire.CodeInvalidACL, "/f", "Acl is not valid : /f"},
		{wire.CodeNoChildrenForEphemerals, "/e/x", "Ephemerals cannot have children: /e/x"},
		{wire.CodeBadArguments, "/x", "Arguments are not valid : /x"},
		{wire.CodeNoWatcher, "/h", "KeeperErrorCode = No such watcher for /h"},
		{wire.CodeUnimplemented, "/t", "KeeperErrorCode = Unimplemented for /t"},
		{wire.CodeAuthFailed, "", "KeeperErrorCode = AuthFailed"},
		{client.ErrConnectionLoss, "/a", "KeeperErrorCode = ConnectionLoss for /a"},
		{client.ErrSessionExpired, "/a", "KeeperErrorCode = Session expired for /a"},
	}
	for _, c := range cases {
		if got := zkMessage(c.path, c.err); got != c.want {
			t.Errorf("zkMessage(%q, %v) = %q, want %q", c.path, c.err, got, c.want)
		}
	}
}

func TestExitStatus(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{usagef("ls [-s] [-w] [-R] path"), ExitUsage},
		{&opError{"/x", wire.CodeNoNode}, ExitFailed},
		{&failure{"Not connected"}, ExitFailed},
	}
	for _, c := range cases {
		if got := exitStatus(c.err); got != c.want {
			t.Errorf("exitStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
