package zkfmt

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

// testdata/zk393/version-2 holds files Apache ZooKeeper 3.9.3 wrote (tests/migrate
// with -migrate.nodes=150 -migrate.keep): its newest snapshot and the two
// logs around it, their preallocated zero tails cut to 32 bytes.
const fixtures = "testdata/zk393/version-2"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRealSnapshotRoundTrip(t *testing.T) {
	raw := readFixture(t, "snapshot.a5")
	s, err := DecodeSnapshot(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) < 100 || s.Nodes[0].Path != "" {
		t.Fatalf("%d nodes, first %q: want the root \"\" first and the workload's nodes", len(s.Nodes), s.Nodes[0].Path)
	}
	seen := make(map[string]bool)
	for _, n := range s.Nodes {
		if n.Path != "" {
			if !seen[n.Path[:strings.LastIndexByte(n.Path, '/')]] {
				t.Fatalf("node %q before its parent", n.Path)
			}
		}
		seen[n.Path] = true
	}
	for _, p := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/config", "/m"} {
		if !seen[p] {
			t.Errorf("snapshot lacks %s", p)
		}
	}
	if s.Digest == nil || s.Digest.Version != DigestVersion || !s.HasLastZxid || s.LastZxid < 0xa5 {
		t.Errorf("trailer: digest %+v, lastZxid %#x (%v); want a version-2 digest and lastZxid >= 0xa5", s.Digest, s.LastZxid, s.HasLastZxid)
	}
	// Three kinds of ACL, including a digest id.
	digest := false
	for _, l := range s.ACLs {
		for _, a := range l {
			digest = digest || a.ID.Scheme == "digest" && strings.HasPrefix(a.ID.ID, "alice:")
		}
	}
	if len(s.ACLs) < 3 || !digest {
		t.Errorf("ACL cache %v: want at least 3 lists, one with alice's digest", s.ACLs)
	}
	var out bytes.Buffer
	if err := EncodeSnapshot(&out, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), raw) {
		t.Fatalf("re-encoded snapshot differs from ZooKeeper's (%d vs %d bytes)", out.Len(), len(raw))
	}
}

func TestSnapshotGzip(t *testing.T) {
	raw := readFixture(t, "snapshot.a5")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	zxid, c, ok := ParseSnapshotName("snapshot.a5.gz")
	if !ok || zxid != 0xa5 || c != CompressionGzip {
		t.Fatalf("ParseSnapshotName = %#x %v %v", zxid, c, ok)
	}
	r, err := Decompress(&z, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSnapshot(r)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := DecodeSnapshot(bytes.NewReader(raw))
	if !reflect.DeepEqual(got, want) {
		t.Fatal("gzip snapshot decodes differently")
	}
}

func TestSnapshotSnappyRefused(t *testing.T) {
	_, c, ok := ParseSnapshotName("snapshot.a5.snappy")
	if !ok || c != CompressionSnappy {
		t.Fatal("snappy name not recognised")
	}
	_, err := Decompress(bytes.NewReader(nil), c)
	if err == nil || !strings.Contains(err.Error(), "snappy") {
		t.Fatalf("err = %v, want one naming snappy", err)
	}
}

func TestSnapshotDamage(t *testing.T) {
	raw := readFixture(t, "snapshot.a5")
	// A flipped byte in the body fails the first seal.
	bad := bytes.Clone(raw)
	bad[len(bad)/2] ^= 0x40
	if _, err := DecodeSnapshot(bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped byte: err = %v, want ErrCorrupt", err)
	}
	// Cut anywhere: an error, except inside the optional digest or lastZxid
	// (ZooKeeper reads such a file as one without them); a cut seal after
	// either is an error to ZooKeeper too.
	full, _ := DecodeSnapshot(bytes.NewReader(raw))
	end := len(raw)
	optionalCut := func(n int) bool {
		return n >= end-54 && n < end-34 || n >= end-21 && n < end-13 || n == end
	}
	for n := 0; n <= len(raw); n++ {
		if n < end-200 && n%61 != 0 {
			continue // every byte of the trailer, a sample of the body
		}
		s, err := DecodeSnapshot(bytes.NewReader(raw[:n]))
		if !optionalCut(n) {
			if err == nil {
				t.Fatalf("cut at %d of %d: no error", n, len(raw))
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d of %d (in an optional section): %v", n, len(raw), err)
		}
		if len(s.Nodes) != len(full.Nodes) || (s.Digest != nil) != (n >= end-34) || s.HasLastZxid != (n == end) {
			t.Fatalf("cut at %d: %d nodes (want %d), digest %v, lastZxid %v", n, len(s.Nodes), len(full.Nodes), s.Digest, s.HasLastZxid)
		}
	}
	if _, err := DecodeSnapshot(bytes.NewReader(append(AppendLogHeader(nil, 0), raw[16:]...))); err == nil || !strings.Contains(err.Error(), "not a ZooKeeper snapshot") {
		t.Fatalf("log magic: err = %v", err)
	}
}

// logRecords reads every record of a log file's bytes.
func logRecords(t testing.TB, raw []byte) [][]byte {
	t.Helper()
	lr, err := NewLogReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		rec, err := lr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

func TestRealLogRoundTrip(t *testing.T) {
	types := make(map[wire.Op]int)
	var last int64
	for _, name := range []string{"log.5c", "log.a7"} {
		raw := readFixture(t, name)
		recs := logRecords(t, raw)
		if len(recs) == 0 {
			t.Fatalf("%s: no records", name)
		}
		rebuilt := AppendLogHeader(nil, 0)
		for _, rec := range recs {
			var h txn.Header
			var tx txn.Txn
			dg, err := DecodeTxn(rec, &h, &tx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if last != 0 && h.Zxid != last+1 {
				t.Fatalf("%s: zxid %#x after %#x", name, h.Zxid, last)
			}
			last = h.Zxid
			if dg == nil || dg.Version != DigestVersion {
				t.Fatalf("%s: txn %#x: digest %+v", name, h.Zxid, dg)
			}
			types[h.Type]++
			for _, op := range tx.Ops {
				types[op.Type+1000]++
			}
			enc, err := AppendTxn(nil, &h, &tx, dg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, rec) {
				t.Fatalf("%s: txn %#x (type %d) re-encodes differently", name, h.Zxid, h.Type)
			}
			rebuilt = AppendLogRecord(rebuilt, rec)
		}
		if !bytes.Equal(rebuilt, bytes.TrimRight(raw, "\x00")) {
			t.Fatalf("%s: re-framed log differs from ZooKeeper's", name)
		}
	}
	for _, op := range []wire.Op{wire.OpCreateSession, wire.OpCloseSession, wire.OpCreate, wire.OpDelete,
		wire.OpSetData, wire.OpSetACL, wire.OpMulti, wire.OpCreateContainer, wire.OpCreateTTL} {
		if types[op] == 0 {
			t.Errorf("fixture logs have no txn of type %d (have %v)", op, types)
		}
	}
}

func TestLogTornAndCorrupt(t *testing.T) {
	raw := bytes.TrimRight(readFixture(t, "log.a7"), "\x00")
	all := logRecords(t, raw)
	// A tail cut anywhere reads as the records before it.
	for n := 16; n < len(raw); n++ {
		got := logRecords(t, raw[:n])
		if len(got) > len(all) || (n < len(raw) && len(got) == len(all)) {
			t.Fatalf("cut at %d: %d records of %d", n, len(got), len(all))
		}
	}
	// A flipped byte inside a record's bytes is a checksum error.
	bad := bytes.Clone(raw)
	bad[16+8+4+20] ^= 1
	lr, err := NewLogReader(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lr.Next(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped byte: err = %v, want ErrCorrupt", err)
	}
	if _, err := NewLogReader(bytes.NewReader(readFixture(t, "snapshot.a5"))); err == nil {
		t.Fatal("a snapshot read as a log")
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		zxid int64
		ok   bool
	}{
		{"snapshot.0", 0, true}, {"snapshot.1a2b", 0x1a2b, true}, {"snapshot.a5.gz", 0xa5, true},
		{"snapshot.", 0, false}, {"snapshot.xyz", 0, false}, {"snap.1", 0, false}, {"snapshot.1.2.3", 0, false},
	} {
		z, _, ok := ParseSnapshotName(tc.name)
		if ok != tc.ok || z != tc.zxid {
			t.Errorf("ParseSnapshotName(%q) = %#x %v", tc.name, z, ok)
		}
	}
	if z, ok := ParseLogName("log.a7"); !ok || z != 0xa7 {
		t.Errorf("ParseLogName = %#x %v", z, ok)
	}
	if _, ok := ParseLogName("log.a7.gz"); ok {
		t.Error("log with an extension accepted")
	}
	if SnapshotName(0xa5) != "snapshot.a5" {
		t.Error(SnapshotName(0xa5))
	}
}
