package sim

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/corral-db/corral/internal/linmodel"
	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/zab"
)

// Mode is the durability mode a simulated server runs in.
type Mode uint8

const (
	// ModeSync: a log entry survives a crash once fsynced (a crash keeps a
	// random prefix of the unsynced tail: a torn write); truncations,
	// snapshots and the hard state are durable at once.
	ModeSync Mode = iota
	// ModeDiskless: no log on disk. Busy snapshots keep a partial state; a
	// server entering election writes a complete checkpoint (state plus its
	// whole log). A crash loses memory; a restart from a partial snapshot
	// is recovering. Epochs are always persisted.
	ModeDiskless
	// ModeAsync: a log entry survives a (process) crash once written to
	// the OS, which Sync does at once; the simulator crashes processes,
	// not machines, which is the mode's promise.
	ModeAsync
)

func (m Mode) String() string {
	switch m {
	case ModeDiskless:
		return "diskless"
	case ModeAsync:
		return "async"
	}
	return "sync"
}

func (m Mode) replica() replica.Mode {
	switch m {
	case ModeDiskless:
		return replica.Diskless
	case ModeAsync:
		return replica.Async
	}
	return replica.Sync
}

// disk is one server's storage as it survives a crash. It is the
// driver's Env: LogStore, HardStateStore and Checkpointer.
type disk struct {
	mode Mode
	hs   zab.HardState
	// snap is the newest snapshot on disk.
	snap machine

	// Sync and async: the log, durable up to synced (an index into ents).
	ents   []zab.Entry
	synced int

	// Diskless: a complete checkpoint's log (after snap) and whether the
	// checkpoint still holds.
	cpLog    []zab.Entry
	complete bool

	// cur is the running server's state machine (Checkpoint snapshots it).
	cur *machine
	// ext is the running incarnation of a Machines state machine (nil:
	// the hash chain): Checkpoint persists it, a crash drops from it what
	// it had not made durable.
	ext Machine
	// tear decides how much of an unsynced tail a crash keeps.
	tear func(n int) int
}

func newDisk(mode Mode) *disk { return &disk{mode: mode, tear: func(int) int { return 0 }} }

func (d *disk) SaveHardState(hs zab.HardState) error { d.hs = hs; return nil }

func (d *disk) Append(ents []zab.Entry) error {
	d.ents = append(d.ents, ents...)
	return nil
}

func (d *disk) Sync() error {
	d.synced = len(d.ents)
	return nil
}

func (d *disk) TruncateAfter(z zab.Zxid) error {
	i := slices.IndexFunc(d.ents, func(e zab.Entry) bool { return e.Zxid > z })
	if i >= 0 {
		d.ents = slices.Clone(d.ents[:i])
	}
	d.synced = min(d.synced, len(d.ents))
	return nil
}

func (d *disk) Checkpoint(entries func(after zab.Zxid) ([]zab.Entry, error)) error {
	if d.ext != nil {
		if _, err := d.ext.Persist(); err != nil {
			return err
		}
	}
	ents, err := entries(d.cur.zxid)
	if err != nil {
		return err
	}
	d.snap = *d.cur
	d.cpLog = slices.Clone(ents)
	d.complete = true
	return nil
}

func (d *disk) Invalidate() error {
	d.complete = false
	return nil
}

// slimDisk is a disk that slims the driver's in-memory log
// (replica.Slimmer): an entry's slim form is a token naming its zxid, and
// Expand reads the entry back from the disk. A Slim of an entry the disk
// does not hold durably, or an Expand of one it lost, is a failure of the
// driver's rules (replica/slim.go).
type slimDisk struct {
	*disk
	fail func(error)
}

// slimToken is the slim form of the entry z: no entry's data.
func slimToken(z zab.Zxid) []byte {
	return binary.BigEndian.AppendUint64([]byte("\xffslim:"), uint64(z))
}

// find returns the index of z in the disk's log, or -1.
func (d *disk) find(z zab.Zxid) int {
	i, ok := slices.BinarySearchFunc(d.ents, z, func(e zab.Entry, z zab.Zxid) int { return cmp.Compare(e.Zxid, z) })
	if !ok {
		return -1
	}
	return i
}

func (d slimDisk) Slim(e zab.Entry) ([]byte, bool) {
	if i := d.find(e.Zxid); i < 0 || i >= d.synced || !bytes.Equal(d.ents[i].Data, e.Data) {
		d.fail(fmt.Errorf("driver slims log entry %v, which the disk does not hold durably", e.Zxid))
		return nil, false
	}
	return slimToken(e.Zxid), true
}

func (d slimDisk) Expand(e zab.Entry) ([]byte, error) {
	if !bytes.Equal(e.Data, slimToken(e.Zxid)) {
		return e.Data, nil
	}
	i := d.find(e.Zxid)
	if i < 0 {
		err := fmt.Errorf("driver rebuilds slim log entry %v, which the disk no longer holds", e.Zxid)
		d.fail(err)
		return nil, err
	}
	return d.ents[i].Data, nil
}

// snapshot writes m as the newest snapshot. Diskless: a busy (fuzzy)
// snapshot, after which a checkpoint no longer applies.
func (d *disk) snapshot(m machine) {
	d.snap = m
	d.cpLog = nil
	d.complete = false
}

// crash drops what does not survive a crash and returns what a restart
// loads: the state, the log after it, and whether the state is a
// complete checkpoint.
func (d *disk) crash() (m machine, log []zab.Entry, complete bool) {
	d.drop()
	return d.load()
}

// drop loses what a crash loses: the unsynced tail of the log (in sync
// mode, all but a torn prefix of it), and what a Machines state machine
// had not made durable.
func (d *disk) drop() {
	if d.ext != nil {
		d.ext.Crash()
		d.ext = nil
	}
	if d.mode == ModeDiskless {
		return
	}
	keep := d.synced
	if d.mode == ModeSync {
		keep += d.tear(len(d.ents) - d.synced)
	}
	clear(d.ents[keep:])
	d.ents = d.ents[:keep]
	d.synced = keep
}

// load returns what a restart loads (a copy the driver owns).
func (d *disk) load() (m machine, log []zab.Entry, complete bool) {
	if d.mode == ModeDiskless {
		if d.complete {
			log = slices.Clone(d.cpLog)
		}
		return d.snap, log, d.complete
	}
	return d.snap, slices.Clone(d.ents), false
}

// durable reports whether z survives a crash of this server now.
func (d *disk) durable(z zab.Zxid) bool {
	if z <= d.snap.zxid {
		return true
	}
	i := d.find(z)
	return i >= 0 && i < d.synced
}

// simSM is the state machine a simulated server's driver feeds: the hash
// chain of machine, with the checker told of every entry.
type simSM struct {
	m       machine
	ext     Machine // nil: the hash chain
	disk    *disk
	applied func(e zab.Entry, m machine, res linmodel.Result, isOp bool) error
	install func(m machine) error
	// image, if set, gives the reader of an install's image (a streamed
	// SNAP's spool, stream.go).
	image imageHook
	// snaps records the snapshots taken (the log-cut check).
	snaps int
}

func (s *simSM) Apply(ents []zab.Entry) error {
	if s.ext != nil {
		ms, err := s.ext.Apply(ents)
		if err != nil {
			return err
		}
		for i, e := range ents {
			// Register results are the hash chain's (the register
			// workload does not run on a Machines state machine).
			s.m = ms[i]
			if err := s.applied(e, s.m, linmodel.Result{}, false); err != nil {
				return err
			}
		}
		return nil
	}
	for _, e := range ents {
		res, isOp := s.m.apply(e)
		if err := s.applied(e, s.m, res, isOp); err != nil {
			return err
		}
	}
	return nil
}

func (s *simSM) Applied() zab.Zxid { return s.m.zxid }
func (s *simSM) Durable() zab.Zxid { return s.disk.snap.zxid }

func (s *simSM) Snapshot(context.Context) (zab.Zxid, error) {
	if s.ext != nil {
		m, err := s.ext.Persist()
		if err != nil {
			return 0, err
		}
		s.m = m
	}
	s.disk.snapshot(s.m)
	s.snaps++
	return s.m.zxid, nil
}

func (s *simSM) WriteSnapshot(_ context.Context, w io.Writer) (zab.Zxid, error) {
	if s.ext != nil {
		return s.ext.WriteSnapshot(w)
	}
	_, err := w.Write(s.m.encode())
	return s.m.zxid, err
}

func (s *simSM) InstallSnapshot(_ context.Context, r io.Reader) (zab.Zxid, error) {
	if s.image != nil {
		img, done, err := s.image(r)
		if err != nil {
			return 0, err
		}
		defer done()
		r = img
	}
	if s.ext != nil {
		m, err := s.ext.InstallSnapshot(r)
		if err != nil {
			return 0, err
		}
		s.m = m
		s.disk.snapshot(m)
		return m.zxid, s.install(m)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	m, ok := decodeMachine(b)
	if !ok {
		return 0, fmt.Errorf("snapshot image of %d bytes, want %d", len(b), machineSize)
	}
	s.m = m
	s.disk.snapshot(m)
	return m.zxid, s.install(m)
}
