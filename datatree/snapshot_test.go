package datatree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// sampleTree has every kind of node, several ACLs, nil and empty data, and
// sessions.
func sampleTree(t testing.TB) *Tree {
	a := newApplier(t)
	a.apply(sessA, &txn.Txn{Type: wire.OpCreateSession, Timeout: 30000})
	a.apply(sessB, &txn.Txn{Type: wire.OpCreateSession, Timeout: 4000})
	a.create("/app", "config", wire.ModePersistent)
	a.create("/app/eph", "", wire.ModeEphemeral)
	a.create("/c", "", wire.ModeContainer)
	a.apply(sessA, &txn.Txn{Type: wire.OpCreateTTL, Path: "/t", ACL: wire.OpenACLUnsafe, ParentCVersion: a.nextCV("/t"), TTL: 1234})
	a.apply(sessA, &txn.Txn{Type: wire.OpCreate, Path: "/nil", ACL: []wire.ACL{acl(31, "digest", "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="), acl(1, "ip", "10.0.0.0/8")}, ParentCVersion: a.nextCV("/nil")})
	a.apply(sessA, &txn.Txn{Type: wire.OpSetACL, Path: "/app", ACL: wire.ReadACLUnsafe, Version: 3})
	a.apply(sessA, &txn.Txn{Type: wire.OpSetData, Path: "/app", Data: bytes.Repeat([]byte("x"), 100_000), Version: 1})
	a.apply(sessA, &txn.Txn{Type: wire.OpSetData, Path: "/", Data: []byte("root data"), Version: 1})
	for i := 0; i < 30; i++ {
		a.create(fmt.Sprintf("/app/n%02d", i), fmt.Sprint(i), wire.ModePersistent)
	}
	a.del("/app/n07")
	return a.tr
}

func snapshotBytes(t testing.TB, tr *Tree) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := tr.WriteSnapshot(&buf, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkSnapshotRoundTrip reads b back and compares it with tr.
func checkSnapshotRoundTrip(t *testing.T, tr *Tree, b []byte) {
	t.Helper()
	got, err := ReadSnapshot(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != tr.Digest() {
		t.Fatalf("digest differs after the round trip: %s", diffTrees(tr, got))
	}
}

// TestSnapshotChunksByBytes: with large values the snapshot yields by bytes
// long before snapYieldEvery records, so the lock is never held for more
// than about snapChunkBytes of encoding, and the chunks read back whole.
func TestSnapshotChunksByBytes(t *testing.T) {
	a := newApplier(t)
	const n, size = 300, 4 << 10
	for i := 0; i < n; i++ {
		a.tr.Apply(&txn.Header{Zxid: int64(10 + i)}, createTxn(fmt.Sprintf("/n%d", i), bytes.Repeat([]byte("v"), size), int32(i+1)), &a.r)
	}
	var buf bytes.Buffer
	yields, biggest := 0, 0
	err := a.tr.WriteSnapshot(&buf, func(write func()) {
		yields++
		before := buf.Len()
		write()
		biggest = max(biggest, buf.Len()-before)
	})
	if err != nil {
		t.Fatal(err)
	}
	if min := n * size / snapChunkBytes; yields < min {
		t.Errorf("yielded %d times for %d KiB of values, want at least %d", yields, n*size>>10, min)
	}
	if biggest > snapChunkBytes+size+512 {
		t.Errorf("a chunk of %d bytes was written, want at most about %d", biggest, snapChunkBytes+size)
	}
	checkSnapshotRoundTrip(t, a.tr, buf.Bytes())
}

func TestSnapshotRoundTrip(t *testing.T) {
	tr := sampleTree(t)
	b := snapshotBytes(t, tr)
	got, err := ReadSnapshot(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, got)
	if got.Digest() != tr.Digest() {
		t.Fatalf("digest differs: %s", diffTrees(tr, got))
	}
	if d := diffTrees(tr, got); d != "[]" {
		t.Fatal(d)
	}
	if got.LastZxid() != tr.LastZxid() || got.NodeCount() != tr.NodeCount() ||
		got.ApproximateDataSize() != tr.ApproximateDataSize() || got.EphemeralCount() != tr.EphemeralCount() {
		t.Error("counters differ")
	}
	if !reflect.DeepEqual(got.Sessions(), tr.Sessions()) || !reflect.DeepEqual(got.SessionsWithEphemerals(), tr.SessionsWithEphemerals()) {
		t.Error("sessions differ")
	}
	for p := range dumpTree(tr) {
		if statOf(t, tr, p) != statOf(t, got, p) {
			t.Errorf("%s: stat differs", p)
		}
		if (tr.Get(p).Data() == nil) != (got.Get(p).Data() == nil) {
			t.Errorf("%s: nil data not preserved", p)
		}
	}
	if got.Get("") != got.Get("/") {
		t.Error("root alias lost")
	}
	if got.acls.size() != tr.acls.size() {
		t.Errorf("acl cache %d lists, want %d", got.acls.size(), tr.acls.size())
	}
	// The loaded tree keeps working: ephemerals die with their session.
	var r Result
	got.Apply(&txn.Header{SessionID: sessA, Zxid: got.LastZxid() + 1}, &txn.Txn{Type: wire.OpCloseSession}, &r)
	if got.Get("/app/eph") != nil || len(r.Events) != 2 {
		t.Error("closeSession after load did not delete the ephemeral")
	}
	checkInvariants(t, got)
	// And a fresh tree round-trips too.
	fresh, err := ReadSnapshot(bytes.NewReader(snapshotBytes(t, New())))
	if err != nil || fresh.Digest() != New().Digest() {
		t.Errorf("fresh tree: %v", err)
	}
}

func TestSnapshotYields(t *testing.T) {
	a := newApplier(t)
	for i := 0; i < 2500; i++ {
		a.tr.Apply(&txn.Header{Zxid: int64(10 + i)}, createTxn(fmt.Sprintf("/n%d", i), nil, int32(i+1)), &a.r)
	}
	yields := 0
	var buf bytes.Buffer
	if err := a.tr.WriteSnapshot(&buf, func(write func()) { yields++; write() }); err != nil {
		t.Fatal(err)
	}
	if want := (2500 + 4) / snapYieldEvery; yields != want {
		t.Errorf("yielded %d times, want %d", yields, want)
	}
	checkSnapshotRoundTrip(t, a.tr, buf.Bytes())
}

func TestSnapshotCorruption(t *testing.T) {
	good := snapshotBytes(t, sampleTree(t))
	check := func(name string, b []byte) {
		t.Helper()
		tr, err := ReadSnapshot(bytes.NewReader(b))
		if err == nil {
			t.Fatalf("%s: no error (tree with %d nodes)", name, tr.NodeCount())
		}
		if !errors.Is(err, ErrCorruptSnapshot) {
			t.Fatalf("%s: error %v does not wrap ErrCorruptSnapshot", name, err)
		}
	}
	// Every truncation (the long data field is sampled).
	for n := 0; n < len(good); n++ {
		if n > 200 && n < len(good)-2000 && n%997 != 0 {
			continue
		}
		check(fmt.Sprintf("truncated to %d", n), good[:n])
	}
	// Every single-byte change outside the long data field, and some inside.
	for i := 0; i < len(good); i++ {
		if i > 200 && i < len(good)-2000 && i%991 != 0 {
			continue
		}
		b := bytes.Clone(good)
		b[i] ^= 0x5a
		check(fmt.Sprintf("byte %d changed", i), b)
	}
	check("garbage", bytes.Repeat([]byte{0xff}, 100))
	check("wrong magic", append([]byte("XXXX"), good[4:]...))
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestSnapshotReaderError(t *testing.T) {
	boom := errors.New("disk on fire")
	if _, err := ReadSnapshot(io.MultiReader(bytes.NewReader([]byte("CTRE")), failingReader{boom})); !errors.Is(err, boom) {
		t.Errorf("got %v, want the reader's error", err)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestSnapshotWriterError(t *testing.T) {
	a := newApplier(t)
	for i := 0; i < 3000; i++ {
		a.tr.Apply(&txn.Header{Zxid: int64(10 + i)}, createTxn(fmt.Sprintf("/n%d", i), bytes.Repeat([]byte("d"), 100), int32(i+1)), &a.r)
	}
	yields := 0
	err := a.tr.WriteSnapshot(&failingWriter{n: 1000}, func(write func()) { yields++; write() })
	if err == nil {
		t.Fatal("no error from a failing writer")
	}
	// The first chunk's write fails; nothing is encoded after it.
	if yields != 1 {
		t.Errorf("yielded %d times, want 1: the first chunk's write fails", yields)
	}
}

func FuzzReadSnapshot(f *testing.F) {
	f.Add(snapshotBytes(f, New()))
	f.Add(snapshotBytes(f, sampleTree(f))[:300])
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ReadSnapshot(bytes.NewReader(b))
		if err != nil {
			return
		}
		if err := invariantError(tr); err != nil {
			t.Fatal(err)
		}
	})
}

// rawSnapshot encodes nodes with the given paths (all OPEN_ACL_UNSAFE)
// with a valid trailer, to reach the loader's linking past the checksum.
func rawSnapshot(paths []string) []byte {
	b := []byte(snapMagic)
	b = append(b, snapVersion)
	b = binary.AppendVarint(b, 42)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	b = append(b, tagACL)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendVarint(b, 31)
	b = appendSnapString(b, "world")
	b = appendSnapString(b, "anyone")
	for i, p := range paths {
		b = append(b, tagNode)
		b = appendSnapString(b, p)
		b = binary.AppendUvarint(b, uint64(i%3)) // nil, empty, one byte
		if i%3 == 2 {
			b = append(b, 'x')
		}
		b = binary.AppendUvarint(b, 1)
		for j := 0; j < 9; j++ {
			b = binary.AppendVarint(b, int64(i*j))
		}
	}
	b = append(b, tagEnd)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func TestSnapshotLinking(t *testing.T) {
	tr, err := ReadSnapshot(bytes.NewReader(rawSnapshot([]string{"/a/b/c", "/a", "/", "/x/y", "/a/b", "/a", "/q/r/s"})))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	var got []string
	for p := range dumpTree(tr) {
		got = append(got, p)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"/", "/a", "/a/b", "/a/b/c"}) {
		t.Errorf("nodes %v: want orphans dropped and duplicates merged", got)
	}
	if tr.LastZxid() != 42 {
		t.Errorf("LastZxid %d", tr.LastZxid())
	}
	for _, bad := range [][]string{{"/a"}, {"/", "a"}, {"/", "/a/"}, {"/", "/a//b"}, {"/", ""}} {
		if _, err := ReadSnapshot(bytes.NewReader(rawSnapshot(bad))); !errors.Is(err, ErrCorruptSnapshot) {
			t.Errorf("%q: got %v", bad, err)
		}
	}
}

func FuzzSnapshotLinking(f *testing.F) {
	f.Add("/\n/a\n/a/b\n/c/d")
	f.Add("/\n/a\n/a\n/a/b/c")
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ReadSnapshot(bytes.NewReader(rawSnapshot(strings.Split(s, "\n"))))
		if err != nil {
			return
		}
		if err := invariantError(tr); err != nil {
			t.Fatal(err)
		}
	})
}
