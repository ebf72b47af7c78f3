package e2e

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/corral-db/corral/tests/harness"
)

// TestCorruptStorage damages corral's files the two ways the contract
// names, then restarts on them: a torn write after the last log record is
// cut off (with a log line), and a corrupt newest snapshot is set aside in
// favour of an older one plus the log. No acknowledged write may be lost.
// The file formats are corral's own, so this runs against corral only.
func TestCorruptStorage(t *testing.T) {
	t.Parallel()
	if env.Kind != harness.Corral {
		t.Skip("corral's on-disk formats only")
	}
	srv := env.StartWith(t, harness.Config{Extra: []string{"snapCount=50"}})
	c, _ := connect(t, srv)
	open := zk.WorldACL(zk.PermAll)
	try(c.Create("/corrupt", nil, 0, open)).must(t)

	var want []string
	write := func(from, to int) {
		for i := from; i < to; i++ {
			p := fmt.Sprintf("/corrupt/n%04d", i)
			try(c.Create(p, []byte(p), 0, open)).must(t)
			want = append(want, p)
		}
	}
	// Several snapshots: one after each restart's recovery, others every
	// 25-50 writes.
	write(0, 200)
	srv.Stop()
	srv.StartAgain()
	c, _ = connect(t, srv)
	write(200, 400)
	srv.Stop()

	dir := filepath.Join(srv.DataDir, "version-2")
	snaps := filesWithPrefix(t, dir, "snapshot.")
	if len(snaps) < 2 {
		t.Fatalf("want at least two snapshots to fall back between, have %q", snaps)
	}
	newest := snaps[len(snaps)-1]
	flipMiddleByte(t, filepath.Join(dir, newest))
	logs := filesWithPrefix(t, dir, "log.")
	tail := filepath.Join(dir, logs[len(logs)-1])
	tornTail(t, tail)

	srv.StartAgain()
	c, _ = connect(t, srv)
	kids, _, err := c.Children("/corrupt")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(kids)
	if len(kids) != len(want) {
		t.Errorf("after restart on damaged files: %d nodes, want %d", len(kids), len(want))
	}
	for _, p := range want {
		data, _, err := c.Get(p)
		if err != nil || string(data) != p {
			t.Errorf("get %s = %q, %v; want its acknowledged payload", p, data, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, newest+".corrupt")); err != nil {
		t.Errorf("corrupt snapshot %s was not set aside: %v", newest, err)
	}
	logText, err := os.ReadFile(srv.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(logText, []byte("truncat")) && !bytes.Contains(logText, []byte("repair")) {
		t.Errorf("no log line reports the torn log tail being repaired")
	}
	// The repaired log accepts new writes, and they survive a crash.
	write(400, 420)
	srv.Kill()
	srv.StartAgain()
	c, _ = connect(t, srv)
	for _, p := range want[400:] {
		if _, _, err := c.Get(p); err != nil {
			t.Errorf("write %s after repair lost in a crash: %v", p, err)
		}
	}
}

// filesWithPrefix lists the data files with prefix, ordered by the hex zxid
// in their names.
func filesWithPrefix(t *testing.T, dir, prefix string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if _, err := strconv.ParseUint(strings.TrimPrefix(n, prefix), 16, 64); err == nil {
			out = append(out, n)
		}
	}
	zx := func(n string) uint64 { v, _ := strconv.ParseUint(strings.TrimPrefix(n, prefix), 16, 64); return v }
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(zx(a), zx(b)) })
	return out
}

func flipMiddleByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tornTail writes garbage right after the last record of a preallocated
// segment, as a write torn by a crash would leave it.
func tornTail(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := len(b)
	for end > 0 && b[end-1] == 0 {
		end--
	}
	garbage := []byte{0, 0, 1, 0, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(garbage, int64(end)); err != nil {
		t.Fatal(err)
	}
}
