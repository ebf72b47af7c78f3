package replica

// Drive runs the pipeline on the caller's goroutine when no other
// goroutine is processing: every Ready the node has, the log append and
// one sync of what they queued, then the Readys that persistence makes
// (on a group of one, the commit and the Apply of the caller's own
// proposal). It returns false, having woken the node loop instead, when
// Process is running elsewhere: that call, or the node loop after it,
// handles what the caller proposed.
//
// It is the idle fast path of a group of one voter (a standalone
// server): a lone write is proposed, made durable, committed and applied
// without a hand-off between goroutines, where the node loop and the log
// goroutine would cost three wake-ups. Writes proposed while it holds
// the Process lock wait in the node's log and go to the node loop and
// the log goroutine, in groups that share one sync, as without Drive;
// Drive writes at most one group itself.
// Drive needs the log goroutine (RunLog) or a later SyncLog for what it
// does not write itself; in diskless mode it only processes.
func (d *Driver) Drive() (bool, error) {
	if !d.pmu.TryLock() {
		d.signal()
		return false, nil
	}
	d.inDrive = true
	defer func() {
		d.inDrive = false
		d.pmu.Unlock()
	}()
	if err := d.processLocked(byDrive); err != nil {
		return true, err
	}
	if d.diskless || !d.Pending() {
		return true, nil
	}
	// One sync round only: entries proposed meanwhile, which the second
	// Process queued, go to the log goroutine, so a caller does not keep
	// writing other callers' groups.
	if err := d.syncLog(true); err != nil {
		return true, err
	}
	if err := d.processLocked(byDrive); err != nil {
		return true, err
	}
	if d.Pending() {
		d.lq.wake()
	}
	return true, nil
}

// InDrive reports whether the Process running now is Drive's, on its
// caller's goroutine. Only the state machine's Apply and InstallSnapshot
// may ask (they run inside Process): an owner can then apply on the
// spot what it would otherwise hand to a goroutine of its own.
func (d *Driver) InDrive() bool { return d.inDrive }
