package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/corral-db/corral/zab"
)

// forcedRecoveryFile, in the snapshot directory (dataDir/version-2), keeps
// one line per forced start (Ensemble.ForceRecover): when, which member,
// the snapshot it started from and its epochs. It is only ever appended to,
// so the record of a forced recovery survives later restarts.
const forcedRecoveryFile = "forced-recovery"

// forcedRecoveryMax bounds what is kept of an earlier record.
const forcedRecoveryMax = 1 << 20

// wouldRecover says whether a member restarted from this storage would be
// recovering: the rule replica.New applies (diskless, not restarted from a
// complete checkpoint, and it had taken part in an epoch).
func wouldRecover(st *storage, hs zab.HardState) bool {
	return st.opts.Durability == DurabilityDiskless && !st.complete &&
		(hs.AcceptedEpoch > 0 || hs.CurrentEpoch > 0)
}

// forceRecover is the operator's way back after a crash of a majority of a
// diskless ensemble (corral server -force-recover): the member starts as a
// voter from its newest snapshot instead of recovering. Started so on
// every member one at a time, newest zxid first (cmd/corral refuses the
// wrong order when it can see it), the first quorum holds the newest
// snapshot, the usual election picks it, and the others are synchronized
// from it; the writes after the newest snapshot among the members are
// lost (docs/design/diskless.md, "Forced recovery"). It says
// so loudly on stderr and in the log, and records the start in the
// snapshot directory before the member takes part in any election.
func forceRecover(st *storage, hs zab.HardState, id uint64, snapZxid int64) error {
	msg := fmt.Sprintf("corral: FORCED RECOVERY of member %d: starting as a voter from its newest snapshot, zxid %s "+
		"(epoch %d). Force the members one at a time, newest zxid first, so the first quorum holds the newest "+
		"snapshot: writes acknowledged after the newest snapshot among the members are lost. Remove -force-recover "+
		"once the ensemble serves: left in place, a later crash of this member would restart it as a voter that "+
		"may lack acknowledged writes.", id, hex(snapZxid), snapZxid>>32)
	fmt.Fprintln(os.Stderr, msg)
	st.log.Warn("forced recovery: starting as a voter from a partial snapshot; writes after the newest snapshot among the members are lost",
		"id", id, "snapshot", hex(snapZxid), "snapshotEpoch", snapZxid>>32,
		"acceptedEpoch", hs.AcceptedEpoch, "currentEpoch", hs.CurrentEpoch, "record", filepath.Join(st.snapDir, forcedRecoveryFile))
	line := fmt.Sprintf("%s forced recovery: member %d started as a voter from snapshot %s (acceptedEpoch %d, currentEpoch %d)\n",
		time.Now().UTC().Format(time.RFC3339), id, hex(snapZxid), hs.AcceptedEpoch, hs.CurrentEpoch)
	return st.appendForcedRecovery(line)
}

// appendForcedRecovery adds line to the record durably: the old record and
// the line are written to a temporary file, synced, and renamed over it.
func (st *storage) appendForcedRecovery(line string) error {
	path := filepath.Join(st.snapDir, forcedRecoveryFile)
	var old []byte
	if f, err := st.fs.Open(path); err == nil {
		old, err = io.ReadAll(io.LimitReader(f, forcedRecoveryMax))
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	tmp := path + ".tmp"
	f, err := st.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("record forced recovery: %w", err)
	}
	_, err = f.Write(append(old, line...))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = st.fs.Rename(tmp, path)
	}
	if err == nil {
		err = st.fs.SyncDir(st.snapDir)
	}
	if err != nil {
		return fmt.Errorf("record forced recovery: %w", err)
	}
	return nil
}
