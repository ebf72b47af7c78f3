package kv

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/zab"
)

// gatedFS holds the creation of sstables until open is closed: a flush
// then waits, the memtables fill and pebble stalls writes.
type gatedFS struct {
	vfs.FS
	open chan struct{}
}

func (g *gatedFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if strings.HasSuffix(name, ".sst") {
		<-g.open
	}
	return g.FS.Create(name, cat)
}

// TestWriteStallsCounted: while a flush cannot write its table, puts fill
// the memtables until pebble stalls them; the store counts the stall and
// its length (Temperature, the metrics endpoint's
// corral_kv_write_stalls_total), and the puts complete once the flush
// can proceed.
func TestWriteStallsCounted(t *testing.T) {
	g := &gatedFS{FS: vfs.NewMem(), open: make(chan struct{})}
	s, err := Open(Options{FS: g, Dir: "db", Logger: slog.New(slog.DiscardHandler), MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustApply(t, s, entry(t, 1, createTable("t", FamilySpec{Name: "f"})))
	done := make(chan error, 1)
	go func() {
		value := strings.Repeat("v", 4<<10)
		z := zab.Zxid(2)
		for i := range 2000 { // 8 MiB: more than the memtables pebble allows
			m := put("t", strings.Repeat("r", 1+i%50)+string(rune('a'+i%26)), "f", "q", value)
			b, err := m.Encode()
			if err != nil {
				done <- err
				return
			}
			if err := s.Apply([]zab.Entry{{Zxid: z, Data: b}}); err != nil {
				done <- err
				return
			}
			z++
		}
		done <- nil
	}()
	var stalled Temperature
	finished := false
	testutil.Eventually(t, 30*time.Second, "a write stall counted, or the puts done", func() bool {
		tp, err := s.Temperature(0)
		if err != nil {
			t.Fatal(err)
		}
		stalled = tp
		select {
		case err := <-done:
			done <- err
			finished = true
		default:
		}
		return tp.WriteStalls > 0 || finished
	})
	if stalled.WriteStalls == 0 {
		t.Fatalf("the puts finished without a write stall counted: %+v", stalled)
	}
	close(g.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tp, err := s.Temperature(0)
	if err != nil {
		t.Fatal(err)
	}
	if tp.WriteStalls < 1 || tp.WriteStallTime <= 0 {
		t.Fatalf("after the stall: %+v", tp)
	}
}
