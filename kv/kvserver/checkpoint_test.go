package kvserver

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/vfs"
	"github.com/corral-db/corral/zab"
)

func TestCheckpointFile(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(kv.Options{Dir: filepath.Join(dir, "kv"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	create := &kv.Mutation{Op: kv.OpCreateTable, Table: "t", Families: []kv.FamilySpec{{Name: "cf"}}}
	data, _ := create.Encode()
	if err := store.Apply([]zab.Entry{{Zxid: 1, Data: data}}); err != nil {
		t.Fatal(err)
	}
	c := &checkpointFile{log: slog.New(slog.DiscardHandler), fs: vfs.OS(), dir: dir, store: store}
	tail := []zab.Entry{{Zxid: 2, Data: []byte("a")}, {Zxid: 3, Data: []byte("bc")}}
	err = c.Checkpoint(func(after zab.Zxid) ([]zab.Entry, error) {
		if after != 1 {
			return nil, errors.New("asked for the wrong entries")
		}
		return tail, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ents, complete, err := c.load(1)
	if err != nil || !complete || len(ents) != 2 || string(ents[1].Data) != "bc" {
		t.Fatalf("load: %v %v %v", ents, complete, err)
	}
	// Entries the store already holds are left out.
	if ents, _, _ := c.load(2); len(ents) != 1 || ents[0].Zxid != 3 {
		t.Fatalf("load after 2: %v", ents)
	}
	// A damaged file is set aside, never a complete checkpoint.
	b, _ := os.ReadFile(c.path())
	b[len(b)/2] ^= 1
	os.WriteFile(c.path(), b, 0o644)
	if _, complete, err := c.load(1); err != nil || complete {
		t.Fatalf("damaged: complete %v err %v", complete, err)
	}
	if _, err := os.Stat(c.path() + ".damaged"); err != nil {
		t.Fatalf("damaged checkpoint not set aside: %v", err)
	}
	if err := c.Checkpoint(func(zab.Zxid) ([]zab.Entry, error) { return tail, nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.Invalidate(); err != nil {
		t.Fatal(err)
	}
	if _, complete, err := c.load(1); err != nil || complete {
		t.Fatalf("after invalidate: complete %v err %v", complete, err)
	}
}
