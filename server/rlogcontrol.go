package server

import (
	"bytes"
	"strings"

	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/wire"
)

// The control records of logs under rlog.root (docs/design/rlog.md, "The
// API on the tree's logs"). A log whose znode holds a control record
// ("zkrl1 start=S end=E sealed=B") has byte offsets: its entries are
// named by their offsets and the record says where the log starts and
// ends. Prep keeps that true whatever a client sends:
//
//   - a setData of the record: start and end never move down, start <=
//     end, a sealed log stays sealed at its end; a setData that moves the
//     end is allowed only in a multi, whose creates must then fill the
//     bytes it adds exactly (checkLogMulti);
//   - a create under the log: only in that multi, after the setData,
//     persistent, named by the offset where the bytes it adds are next,
//     non-empty, not past the new end;
//   - a delete of an entry: only below the start (what a trim frees) or
//     of a sealed log (what a log's delete does).
//
// A log without a control record (empty data, or data of the client's)
// keeps the plain rules (any create under it appends) until a setData
// gives it one, checked as a change from the empty record.
//
// Failures are BadArguments, except a stale version (BadVersion, the
// compare-and-swap every API write relies on).

// logPath says whether path names a log: root/<log>.
func (d *logData) logPath(path string) bool {
	rest, ok := strings.CutPrefix(path, d.root+"/")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// logOf returns the log path of an entry path.
func logOf(entry string) string { return entry[:strings.LastIndexByte(entry, '/')] }

// controlOf parses a log's control record; ok is false for a log without
// one.
func controlOf(data []byte) (c rlog.Control, ok bool, err error) {
	if !rlog.IsControl(data) {
		return c, false, nil
	}
	c, err = rlog.ParseControl(data)
	return c, true, err
}

// prepLogCreate checks a create under the root: of a log (its data, if a
// control record, is a new log's) or of an entry of a log with a control
// record (prec, the log's pending change, advances its cursor; plain says
// the create is persistent and not sequential, as an entry must be: one
// that could vanish with a session or a TTL would leave a hole).
func (s *Server) prepLogCreate(r *request, path string, data []byte, plain bool, prec *change) error {
	if rl := s.store.rl; rl != nil && rl.logPath(path) {
		if c, ok, err := controlOf(data); ok && (err != nil || c != (rlog.Control{})) {
			return wire.CodeBadArguments // a new log starts empty
		}
		return nil
	}
	e, err := s.logEntry(path, prec)
	if err != nil || e == nil {
		return err
	}
	if !e.named || !plain || prec.ctrlAt != r.hdr.Zxid || e.off != prec.cursor || len(data) == 0 || e.off+int64(len(data)) > e.ctl.End {
		return wire.CodeBadArguments
	}
	prec.cursor += int64(len(data))
	return nil
}

// prepLogSetData checks a setData of a log's znode and records the new
// data in rec, the log's pending change.
func (s *Server) prepLogSetData(r *request, path string, data []byte, rec *change) error {
	rl := s.store.rl
	if rl == nil || !rl.logPath(path) {
		return nil
	}
	old, wasCtl, err := controlOf(rec.data)
	if err != nil {
		return wire.CodeBadArguments
	}
	next, isCtl, err := controlOf(data)
	switch {
	case err != nil:
		return wire.CodeBadArguments
	case wasCtl && !isCtl:
		return wire.CodeBadArguments // a log keeps its offsets
	case isCtl && rlog.CheckControl(old, next) != nil:
		// A log without a record takes one as if it had the empty one
		// (start=0 end=0): its first append sets the record.
		return wire.CodeBadArguments
	}
	if rec.ctrlAt == r.hdr.Zxid && rec.cursor != old.End {
		// A second setData in one multi: the bytes the first added must
		// be filled before the end moves again.
		return wire.CodeBadArguments
	}
	if next.End > old.End {
		if r.op != wire.OpMulti {
			return wire.CodeBadArguments // the end moves with the entry that fills it
		}
		rec.ctrlAt, rec.cursor = r.hdr.Zxid, old.End
	}
	rec.data = bytes.Clone(data)
	return nil
}

// prepLogDelete checks a delete of an entry of a log with a control
// record.
func (s *Server) prepLogDelete(path string, prec *change) error {
	e, err := s.logEntry(path, prec)
	if err != nil || e == nil || !e.named || e.ctl.Sealed {
		return err
	}
	if e.off+s.entryLength(path) > e.ctl.Start {
		return wire.CodeBadArguments // above the start: trim first
	}
	return nil
}

// logEntry is where an entry created or deleted stands in a log with a
// control record.
type logEntry struct {
	ctl   rlog.Control // the log's record as prep leaves it
	off   int64        // the offset the entry's name gives
	named bool         // whether the name is an offset at all
}

// logEntry returns where path stands in its log, whose pending change is
// prec: nil where the plain rules apply (no logs, not an entry, a log
// without a control record), BadArguments for a record that does not
// parse.
func (s *Server) logEntry(path string, prec *change) (*logEntry, error) {
	rl := s.store.rl
	if rl == nil || !rl.entryPath(path) {
		return nil, nil
	}
	c, ok, err := controlOf(prec.data)
	if !ok {
		return nil, nil
	}
	if err != nil {
		return nil, wire.CodeBadArguments
	}
	off, named := rlog.ParseEntryName(path[strings.LastIndexByte(path, '/')+1:])
	return &logEntry{ctl: c, off: off, named: named}, nil
}

// entryLength is the length of an entry in the tree (its payload's, for
// one in the data log); an entry not yet applied counts as reaching past
// any start.
func (s *Server) entryLength(path string) int64 {
	s.mu.RLock()
	data := s.nodeData(path)
	s.mu.RUnlock()
	if data == nil {
		return 1 << 62
	}
	if ref, ok := parseRef(data); ok {
		return int64(ref.length)
	}
	return int64(len(data))
}

// checkLogMulti checks, once every op of a multi has passed, that each
// log whose end the multi moved got its bytes; it returns the index of
// the op to fail, or -1.
func (s *Server) checkLogMulti(r *request, m *wire.MultiRequest) int {
	rl := s.store.rl
	if rl == nil {
		return -1
	}
	for i := range m.Ops {
		p := m.Ops[i].Path()
		if m.Ops[i].Type != wire.OpSetData || !rl.logPath(p) {
			continue
		}
		rec, ok := s.record(p)
		if !ok || rec.ctrlAt != r.hdr.Zxid {
			continue
		}
		if c, _, _ := controlOf(rec.data); rec.cursor != c.End {
			return i
		}
	}
	return -1
}
