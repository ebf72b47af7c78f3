package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/zab"
)

// Without the probe tag nothing is recorded or written; with it (go test
// -tags probe) the marks come out one per line in the order made.
func TestDumpWritesMarksOnlyWithTheTag(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CORRAL_PROBE_DIR", dir)
	Mark("first", 1)
	Mark("second", 0x100000002)
	if err := Dump(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "probe-*.txt"))
	if !Enabled {
		if len(files) != 0 {
			t.Fatalf("probe off, yet it wrote %v", files)
		}
		return
	}
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " first 1") || !strings.HasSuffix(lines[1], " second 4294967298") {
		t.Fatalf("dump %q", b)
	}
}

func TestMsgZxid(t *testing.T) {
	for _, tc := range []struct {
		m    zab.Message
		want int64
	}{
		{zab.Message{Entries: []zab.Entry{{Zxid: 5}, {Zxid: 7}}, Commit: 3}, 7},
		{zab.Message{Commit: 3, Zxid: 2}, 3},
		{zab.Message{Zxid: 2}, 2},
	} {
		if got := MsgZxid(tc.m); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.m, got, tc.want)
		}
	}
}
