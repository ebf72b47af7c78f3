package kv

import (
	"encoding/binary"

	"github.com/corral-db/corral/kv/ring"
)

// The range-move operations (docs/design/kv-sharding.md, "Range moves").
// Each is one zab entry of the RG it names, so it is ordered with every
// write that RG acknowledged.
const (
	// OpFence, in the source RG: rows hashing into the range are refused
	// (WrongRange) from this entry on. Refused for a move sealed here.
	OpFence Op = 7
	// OpIngest, in the target RG: cells (versions kept) and
	// deduplication records copied from the source. Idempotent; refused
	// once the move is sealed.
	OpIngest Op = 8
	// OpSeal, in the target RG: no more ingests (or fences) of the move;
	// lifts this RG's own fences on the range (a range coming back; an
	// aborted move, sealed in its source).
	OpSeal Op = 9
	// OpDropRange, in the source RG once the ring gives the range away:
	// deletes the range's rows. Refused unless the move fenced it.
	OpDropRange Op = 10
)

func (o Op) isMove() bool { return o >= OpFence && o <= OpDropRange }

func moveOpName(o Op) (string, bool) {
	switch o {
	case OpFence:
		return "fence", true
	case OpIngest:
		return "ingest", true
	case OpSeal:
		return "seal", true
	case OpDropRange:
		return "drop-range", true
	}
	return "", false
}

// MoveOp is the content of a range-move operation.
type MoveOp struct {
	ID    uint64     // the move, nonzero
	Range ring.Range // the hash range moved
	// To and RingVersion (OpFence): where the range goes and the ring
	// version that gives it there, named in the WrongRange answers.
	To          uint32
	RingVersion uint64
	Cells       []MovedCell   // OpIngest
	Clients     []MovedClient // OpIngest
}

// MovedCell is one version of one cell copied by a move, by table and
// family name (ids differ between RGs).
type MovedCell struct {
	Table     string
	Family    string
	Row       []byte
	Qualifier []byte
	Version   uint64
	Value     []byte
}

// MovedClient is one deduplication record copied by a move (its encoding
// as the source stores it, dedupe.go), so that a retry of a write the
// source applied is answered, not applied again, by the target.
type MovedClient struct {
	Client uint64
	Record []byte
}

// Limits of one ingest (it must fit one entry anyway).
const (
	MaxMovedCells   = 1 << 16
	MaxMovedClients = 1 << 16
)

func (m *Mutation) validateMove() error {
	if !m.Op.isMove() || m.Move == nil {
		return invalidf("%v: move step without its content", m.Op)
	}
	if m.Table != "" || m.Client != 0 || len(m.Row) != 0 || len(m.Cells) != 0 || len(m.Families) != 0 {
		return invalidf("%v: a move step names no table, row or request id", m.Op)
	}
	mv := m.Move
	if mv.ID == 0 {
		return invalidf("%v: move id 0", m.Op)
	}
	if m.Op == OpFence && (mv.To == 0 || mv.RingVersion == 0) {
		return invalidf("fence: no target group or ring version")
	}
	if m.Op != OpFence && (mv.To != 0 || mv.RingVersion != 0) {
		return invalidf("%v: target group or ring version set", m.Op)
	}
	if m.Op != OpIngest && (len(mv.Cells) != 0 || len(mv.Clients) != 0) {
		return invalidf("%v: cells or clients set", m.Op)
	}
	if len(mv.Cells) > MaxMovedCells || len(mv.Clients) > MaxMovedClients {
		return invalidf("ingest of %d cells and %d clients exceeds %d", len(mv.Cells), len(mv.Clients), MaxMovedCells)
	}
	for i := range mv.Cells {
		c := &mv.Cells[i]
		if err := checkName("table", c.Table); err != nil {
			return err
		}
		if err := checkName("family", c.Family); err != nil {
			return err
		}
		if err := checkRow(c.Row); err != nil {
			return err
		}
		if err := checkQualifier(c.Qualifier); err != nil {
			return err
		}
		if err := checkValue(c.Value); err != nil {
			return err
		}
		if c.Version == 0 {
			return invalidf("ingest: cell version 0")
		}
		if !mv.Range.Contains(ring.Hash(c.Row)) {
			return invalidf("ingest: row %q outside %v", c.Row, mv.Range)
		}
	}
	for _, c := range mv.Clients {
		if c.Client == 0 {
			return invalidf("ingest: client id 0")
		}
		if _, err := decodeClientRecord(c.Record); err != nil {
			return invalidf("ingest: client %x: %v", c.Client, err)
		}
	}
	return nil
}

// append encodes a move step (after the mutation's header and empty table).
func (mv *MoveOp) append(b []byte) []byte {
	b = binary.AppendUvarint(b, mv.ID)
	b = binary.BigEndian.AppendUint64(b, mv.Range.Start)
	b = binary.BigEndian.AppendUint64(b, mv.Range.End)
	b = binary.AppendUvarint(b, uint64(mv.To))
	b = binary.AppendUvarint(b, mv.RingVersion)
	b = binary.AppendUvarint(b, uint64(len(mv.Cells)))
	for _, c := range mv.Cells {
		b = appendBytes(b, []byte(c.Table))
		b = appendBytes(b, []byte(c.Family))
		b = appendBytes(b, c.Row)
		b = appendBytes(b, c.Qualifier)
		b = binary.AppendUvarint(b, c.Version)
		b = appendBytes(b, c.Value)
	}
	b = binary.AppendUvarint(b, uint64(len(mv.Clients)))
	for _, c := range mv.Clients {
		b = binary.AppendUvarint(b, c.Client)
		b = appendBytes(b, c.Record)
	}
	return b
}

func (d *decoder) uint64be() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.fail("truncated")
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func decodeMoveOp(d *decoder, op Op) *MoveOp {
	mv := &MoveOp{ID: d.uvarint()}
	mv.Range.Start = d.uint64be()
	mv.Range.End = d.uint64be()
	to := d.uvarint()
	if to > 1<<32-1 {
		d.fail("group %d", to)
	}
	mv.To = uint32(to)
	mv.RingVersion = d.uvarint()
	n := d.count(6)
	if n > 0 {
		mv.Cells = make([]MovedCell, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		c := &mv.Cells[i]
		c.Table = d.str()
		c.Family = d.str()
		c.Row = d.bytes()
		c.Qualifier = d.bytes()
		c.Version = d.uvarint()
		c.Value = d.bytes()
	}
	n = d.count(2)
	if n > 0 {
		mv.Clients = make([]MovedClient, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		mv.Clients[i] = MovedClient{Client: d.uvarint(), Record: d.bytes()}
	}
	return mv
}
