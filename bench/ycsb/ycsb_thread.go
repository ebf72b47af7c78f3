package ycsb

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/corral-db/corral/bench"
	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/bench/stats"
	"github.com/corral-db/corral/wire"
)

// ycsbOpStats is what one thread saw of one operation kind in the
// Measured interval.
type ycsbOpStats struct {
	// Hist holds the latencies of successful operations, from sending the
	// first request to reading the last reply; intended, in target mode,
	// from the time the schedule meant the operation to start.
	hist, intended *stats.Hist
	ops, errs      int64
	firstErr       wire.Code
	// conflicts are read-modify-writes whose setData found the version
	// changed (BadVersion); records are the nodes scans read.
	conflicts, records int64
}

// ycsbThreadStats is what one thread saw.
type ycsbThreadStats struct {
	op [ycsbOpKinds]ycsbOpStats
	// connErrs are measured operations lost to a failed connection,
	// reconnects the sessions opened to replace one.
	connErrs, reconnects int64
	firstConnErr         string
}

// ycsbMaxOpsPerThread bounds every thread's loop by count as well as time.
const ycsbMaxOpsPerThread = 1 << 26

// ycsbThread is one YCSB client thread: a closed loop of operations on
// its own session, paced by a schedule in target mode.
type ycsbThread struct {
	id    int
	addrs []string
	// sessionTimeout is asked for by every session the thread opens.
	sessionTimeout time.Duration
	table          string
	ch             *ycsbChooser
	inserts        *ackCounter
	bytes          *ycsbBytes
	r              *rand.Rand
	// interval, if positive, is the time between the operations' intended
	// starts (target mode); first is the first one's.
	interval time.Duration
	first    time.Time

	sess   *ycsbSession
	unbind func() bool // stops closing sess's socket with the phase context
	// rec is the value updates and inserts write; rmw the value a
	// read-modify-write writes back.
	rec, rmw []byte
	path     []byte
	paths    [][]byte
	st       ycsbThreadStats
}

// bind makes the end of ctx close the session's socket, which is what
// interrupts a thread blocked on a server that stopped answering.
func (t *ycsbThread) bind(ctx context.Context, c *load.Conn) {
	t.sess = newYCSBSession(c)
	t.unbind = context.AfterFunc(ctx, func() { c.Close() })
}

// loop runs operations until w.end (an operation in flight then
// finishes), ctx ends, or the thread's count bound. Only operations that
// Finish in the measured interval are recorded.
func (t *ycsbThread) loop(ctx context.Context, w bench.DurWindow) error {
	for n := range ycsbMaxOpsPerThread {
		var intended time.Time
		if t.interval > 0 {
			intended = t.first.Add(time.Duration(n) * t.interval)
			if !intended.Before(w.End) {
				return nil
			}
			if !load.SleepCtx(ctx, time.Until(intended)) {
				return context.Cause(ctx)
			}
		}
		sent := time.Now()
		if !sent.Before(w.End) {
			return nil
		}
		op := t.ch.next()
		code, records, err := t.do(op)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if w.Measured(now) {
				t.st.connErrs++
				if t.st.firstConnErr == "" {
					t.st.firstConnErr = err.Error()
				}
			}
			if err := t.reconnect(ctx, w); err != nil {
				return err
			}
			continue
		}
		if !w.Measured(now) {
			continue
		}
		s := &t.st.op[op.Kind]
		switch {
		case op.Kind == opRMW && code == wire.CodeBadVersion:
			s.conflicts++
			continue
		case code != wire.CodeOK:
			if s.errs == 0 {
				s.firstErr = code
			}
			s.errs++
			continue
		}
		s.ops++
		s.records += int64(records)
		if s.hist == nil {
			s.hist = stats.NewHist()
		}
		s.hist.Record(now.Sub(sent))
		if t.interval > 0 {
			if s.intended == nil {
				s.intended = stats.NewHist()
			}
			s.intended.Record(now.Sub(intended))
		}
	}
	return nil
}

// ycsbRedialPause is how long a thread waits after failing to reach any
// server before trying again.
const ycsbRedialPause = 100 * time.Millisecond

// reconnect replaces a failed session with a new one on the next server
// in turn, trying until the window ends: a server that dies mid-run costs
// its clients errors, not the run. It returns an error only when ctx ends.
func (t *ycsbThread) reconnect(ctx context.Context, w bench.DurWindow) error {
	t.unbind()
	t.sess.c.Close()
	for attempt := 1; ; attempt++ {
		if !time.Now().Before(w.End) {
			// Nothing more to send; keep a closed session for the caller's
			// CloseSession to fail on quietly.
			return nil
		}
		addr := t.addrs[(t.id+attempt)%len(t.addrs)]
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := load.Dial(dctx, addr, t.sessionTimeout)
		cancel()
		if err == nil {
			t.st.reconnects++
			t.bind(ctx, c)
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if attempt%len(t.addrs) == 0 && !load.SleepCtx(ctx, ycsbRedialPause) {
			return context.Cause(ctx)
		}
	}
}

// do runs one operation. code is the reply's error code (for a scan, the
// first one other than NoNode); err is for a connection that failed.
func (t *ycsbThread) do(op ycsbOp) (code wire.Code, records int, err error) {
	t.path = appendYCSBKey(t.path[:0], t.table, op.Key)
	switch op.Kind {
	case opRead:
		code, _, _, err = t.sess.getData(t.path)
		return code, 1, err
	case opUpdate:
		t.bytes.fill(ycsbField(t.rec, t.r.IntN(ycsbFieldCount)))
		code, err = t.sess.setData(t.path, t.rec, -1)
		return code, 0, err
	case opInsert:
		// Acknowledged whatever the outcome, as YCSB does.
		defer t.inserts.ack(op.Key)
		t.bytes.fill(t.rec)
		code, err = t.sess.create(t.path, t.rec)
		return code, 0, err
	case opScan:
		last := min(op.Key+int64(op.ScanLen)-1, t.inserts.last())
		t.paths = t.paths[:0]
		for k := op.Key; k <= last; k++ {
			i := len(t.paths)
			if i < cap(t.paths) {
				t.paths = t.paths[:i+1]
			} else {
				t.paths = append(t.paths, nil)
			}
			t.paths[i] = appendYCSBKey(t.paths[i][:0], t.table, k)
		}
		read, code, err := t.sess.getMany(t.paths)
		return code, read, err
	case opRMW:
		code, data, version, err := t.sess.getData(t.path)
		if err != nil || code != wire.CodeOK {
			return code, 0, err
		}
		if len(data) == ycsbRecordSize {
			copy(t.rmw, data)
		} else {
			// Not a record this benchmark wrote: write a whole one.
			copy(t.rmw, t.rec)
		}
		t.bytes.fill(ycsbField(t.rmw, t.r.IntN(ycsbFieldCount)))
		code, err = t.sess.setData(t.path, t.rmw, version)
		return code, 1, err
	}
	return 0, 0, errors.New("bench: unknown YCSB operation")
}
