package sim

import (
	"github.com/corral-db/corral/zab"
)

// Mode is the durability mode a simulated server runs in.
type Mode uint8

const (
	// ModeSync: a log entry survives a crash once fsynced; truncations,
	// snapshots and the hard state are durable at once.
	ModeSync Mode = iota
	// ModeDiskless: no log on disk. Busy snapshots keep a partial state; a
	// server entering election writes a complete checkpoint (state plus its
	// whole log). A crash loses memory; a restart from a partial snapshot
	// is recovering. Epochs are always persisted.
	ModeDiskless
)

func (m Mode) String() string {
	if m == ModeDiskless {
		return "diskless"
	}
	return "sync"
}

// disk is one server's storage: the live view the process reads (a
// zab.MemoryStorage) and what of it survives a crash.
type disk struct {
	mode Mode
	live *zab.MemoryStorage

	// Sync mode: the live log is durable up to syncedZxid; the snapshot
	// and hard state in live are durable.
	syncedZxid zab.Zxid

	// Diskless mode: what is on disk.
	hs       zab.HardState
	snap     zab.Snapshot
	cpLog    []zab.Entry // log saved by a complete checkpoint
	complete bool        // snap (+cpLog) is a complete checkpoint
	dirty    bool        // the live log changed since that checkpoint
}

func newDisk(mode Mode) *disk {
	return &disk{mode: mode, live: zab.NewMemoryStorage()}
}

func (d *disk) setHardState(hs zab.HardState) {
	d.live.SetHardState(hs)
	d.hs = hs
}

func (d *disk) installSnapshot(s zab.Snapshot) {
	d.live.ApplySnapshot(s)
	if d.mode == ModeSync {
		d.syncedZxid = s.Zxid
	} else {
		d.dirty = true
	}
}

func (d *disk) truncate(z zab.Zxid) error {
	if err := d.live.Truncate(z); err != nil {
		return err
	}
	d.syncedZxid = min(d.syncedZxid, z)
	d.dirty = true
	return nil
}

func (d *disk) append(ents []zab.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	d.dirty = true
	return d.live.Append(ents)
}

func (d *disk) lastZxid() zab.Zxid {
	z, _ := d.live.LastZxid()
	return z
}

// fsync makes the whole live log durable (sync mode) and returns its end.
func (d *disk) fsync() zab.Zxid {
	d.syncedZxid = d.lastZxid()
	return d.syncedZxid
}

// compact snapshots the state machine at m and drops the log it covers.
// In sync mode the snapshot is durable at once; in diskless mode it stays
// in memory (busySnapshot writes to disk).
func (d *disk) compact(m machine) error {
	return d.live.Compact(zab.Snapshot{Zxid: m.zxid, Data: m.encode()})
}

// busySnapshot writes a partial (fuzzy) snapshot in diskless mode.
func (d *disk) busySnapshot(m machine) {
	d.snap = zab.Snapshot{Zxid: m.zxid, Data: m.encode()}
	d.cpLog = nil
	d.complete = false
}

// checkpoint writes a complete snapshot in diskless mode: the state and
// every log entry after it, accepted but uncommitted ones included.
func (d *disk) checkpoint(m machine) {
	d.snap = zab.Snapshot{Zxid: m.zxid, Data: m.encode()}
	ents, err := d.live.Entries(m.zxid, d.lastZxid(), ^uint64(0))
	if err != nil {
		// The live log is compacted past the applied state: cannot happen,
		// since the driver compacts only applied entries.
		panic(err)
	}
	d.cpLog = append([]zab.Entry(nil), ents...)
	d.complete = true
	d.dirty = false
}

// crash drops what does not survive a crash and returns the state machine
// the restarted server loads, and whether it restarts recovering.
func (d *disk) crash() (machine, bool) {
	if d.mode == ModeSync {
		snap, _ := d.live.Snapshot()
		if err := d.live.Truncate(max(d.syncedZxid, snap.Zxid)); err != nil {
			panic(err)
		}
		return decodeMachine(snap.Data), false
	}
	recovering := !d.complete || d.dirty
	d.live = zab.NewMemoryStorage()
	d.live.SetHardState(d.hs)
	d.live.ApplySnapshot(d.snap)
	if !recovering {
		if err := d.live.Append(d.cpLog); err != nil {
			panic(err)
		}
	}
	return decodeMachine(d.snap.Data), recovering
}

// durable reports whether z survives a crash of this server now.
func (d *disk) durable(z zab.Zxid) bool {
	snap, _ := d.live.Snapshot()
	if z <= snap.Zxid {
		return true
	}
	if z > d.syncedZxid {
		return false
	}
	_, ok := d.live.Entry(z)
	return ok
}
