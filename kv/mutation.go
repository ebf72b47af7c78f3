package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Op names what a mutation does.
type Op uint8

// The mutation kinds. Each is one zab entry and applies atomically on one
// row (or, for the admin operations, on the schema).
const (
	OpPut            Op = 1 // a delta of columns of one row
	OpDelete         Op = 2 // a row, a family of a row, or a column of a row
	OpCheckAndPut    Op = 3 // OpPut if Cond holds on the same row
	OpCheckAndDelete Op = 4 // OpDelete if Cond holds on the same row
	OpCreateTable    Op = 5
	OpDropTable      Op = 6
	// 7-10: the steps of a range move (movemutation.go).
)

func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpCheckAndPut:
		return "check-and-put"
	case OpCheckAndDelete:
		return "check-and-delete"
	case OpCreateTable:
		return "create-table"
	case OpDropTable:
		return "drop-table"
	}
	if n, ok := moveOpName(o); ok {
		return n
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Scope is how much of a row a delete removes.
type Scope uint8

// The delete scopes.
const (
	ScopeRow    Scope = 1
	ScopeFamily Scope = 2
	ScopeColumn Scope = 3
)

// Limits on what a mutation may carry. The service checks them before
// proposing (InvalidArgument); the decoder checks them again, so no entry
// that breaks them is ever applied.
const (
	MaxNameLen      = 255       // table and family names
	MaxRowLen       = 4 << 10   // row keys
	MaxQualifierLen = 4 << 10   // column qualifiers
	MaxValueLen     = 256 << 10 // one cell's value
	MaxCells        = 10000     // cells of one put
	MaxFamilies     = 64        // families of one table
	MaxVersionsKept = 1 << 16   // a family's MaxVersions
	MaxMutationLen  = 1 << 20   // one encoded mutation
)

// Cell is one column written by a put.
type Cell struct {
	Family    string
	Qualifier []byte
	Value     []byte
}

// Delete says what a delete removes: the whole row, one family of it, or
// one column (every version).
type Delete struct {
	Scope     Scope
	Family    string // ScopeFamily, ScopeColumn
	Qualifier []byte // ScopeColumn
}

// Condition is a check-and-mutate's test on one cell of the mutated row:
// the cell's newest version holds Value, or, with Absent, the cell has no
// version at all.
type Condition struct {
	Family    string
	Qualifier []byte
	Absent    bool
	Value     []byte
}

// FamilySpec is a column family of a table being created.
type FamilySpec struct {
	Name string
	// MaxVersions is how many versions of each cell the family keeps
	// (older ones are removed when a newer one is written); 0 means 1.
	MaxVersions uint32
}

// Mutation is the content of one zab entry of the key-value store.
type Mutation struct {
	Op Op
	// ReqID lets the proposing member match the applied result to the
	// waiting request; other members ignore it.
	ReqID uint64
	// Client and Seq, when Client is not 0, identify the write for
	// deduplication (dedupe.go): the store applies a (Client, Seq) once
	// and answers a repeat with the first result. Seq starts at 1.
	Client   uint64
	Seq      uint64
	Table    string
	Row      []byte       // Put, Delete, CheckAnd*
	Cells    []Cell       // Put, CheckAndPut
	Delete   Delete       // Delete, CheckAndDelete
	Cond     Condition    // CheckAnd*
	Families []FamilySpec // CreateTable
	// Move is the range-move step of OpFence, OpIngest, OpSeal and
	// OpDropRange (move.go); Table is empty for them.
	Move *MoveOp
}

// The entry formats: 1 without a request id, 2 with one (Client, Seq
// after ReqID). Encode writes 1 whenever it can, so entries without a
// request id are the bytes they always were.
const (
	mutationFormat       = 1
	mutationFormatDedupe = 2
)

// ErrInvalid is wrapped by every error about a malformed or oversized
// mutation or request.
var ErrInvalid = errors.New("invalid argument")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// ValidName reports whether s may name a table or a family: 1 to
// MaxNameLen of [A-Za-z0-9_.-] (no ':', which separates family and
// qualifier on the command line).
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func checkName(what, s string) error {
	if !ValidName(s) {
		return invalidf("%s name %q: want 1 to %d of [A-Za-z0-9_.-]", what, s, MaxNameLen)
	}
	return nil
}

func checkRow(row []byte) error {
	if len(row) == 0 {
		return invalidf("empty row key")
	}
	if len(row) > MaxRowLen {
		return invalidf("row key of %d bytes exceeds %d", len(row), MaxRowLen)
	}
	return nil
}

func checkQualifier(q []byte) error {
	if len(q) > MaxQualifierLen {
		return invalidf("qualifier of %d bytes exceeds %d", len(q), MaxQualifierLen)
	}
	return nil
}

func checkValue(v []byte) error {
	if len(v) > MaxValueLen {
		return invalidf("value of %d bytes exceeds %d", len(v), MaxValueLen)
	}
	return nil
}

// Validate checks a mutation's shape and limits (not whether its table and
// families exist, which only apply can tell).
func (m *Mutation) Validate() error {
	if (m.Client == 0) != (m.Seq == 0) {
		return invalidf("request id (client %d, sequence %d): both or neither must be set", m.Client, m.Seq)
	}
	if m.Op.isMove() || m.Move != nil {
		return m.validateMove()
	}
	if err := checkName("table", m.Table); err != nil {
		return err
	}
	switch m.Op {
	case OpPut, OpCheckAndPut:
		if err := checkRow(m.Row); err != nil {
			return err
		}
		if len(m.Cells) == 0 {
			return invalidf("put of no cells")
		}
		if len(m.Cells) > MaxCells {
			return invalidf("put of %d cells exceeds %d", len(m.Cells), MaxCells)
		}
		for i := range m.Cells {
			c := &m.Cells[i]
			if err := checkName("family", c.Family); err != nil {
				return err
			}
			if err := checkQualifier(c.Qualifier); err != nil {
				return err
			}
			if err := checkValue(c.Value); err != nil {
				return err
			}
		}
	case OpDelete, OpCheckAndDelete:
		if err := checkRow(m.Row); err != nil {
			return err
		}
		switch m.Delete.Scope {
		case ScopeRow:
		case ScopeFamily, ScopeColumn:
			if err := checkName("family", m.Delete.Family); err != nil {
				return err
			}
			if err := checkQualifier(m.Delete.Qualifier); err != nil {
				return err
			}
		default:
			return invalidf("delete scope %d", m.Delete.Scope)
		}
	case OpCreateTable:
		if len(m.Families) == 0 {
			return invalidf("table of no families")
		}
		if len(m.Families) > MaxFamilies {
			return invalidf("%d families exceed %d", len(m.Families), MaxFamilies)
		}
		seen := make(map[string]bool, len(m.Families))
		for _, f := range m.Families {
			if err := checkName("family", f.Name); err != nil {
				return err
			}
			if seen[f.Name] {
				return invalidf("family %q twice", f.Name)
			}
			seen[f.Name] = true
			if f.MaxVersions > MaxVersionsKept {
				return invalidf("family %q keeps %d versions, more than %d", f.Name, f.MaxVersions, MaxVersionsKept)
			}
		}
	case OpDropTable:
	default:
		return invalidf("unknown operation %d", m.Op)
	}
	if m.Op == OpCheckAndPut || m.Op == OpCheckAndDelete {
		if err := checkName("family", m.Cond.Family); err != nil {
			return err
		}
		if err := checkQualifier(m.Cond.Qualifier); err != nil {
			return err
		}
		if err := checkValue(m.Cond.Value); err != nil {
			return err
		}
	}
	return nil
}

// Encode returns the entry bytes of a valid mutation.
func (m *Mutation) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	// A put's size, closely: the cells are most of it (one allocation).
	size := 64 + len(m.Table) + len(m.Row)
	for _, c := range m.Cells {
		size += 3*binary.MaxVarintLen16 + len(c.Family) + len(c.Qualifier) + len(c.Value)
	}
	b := make([]byte, 0, size)
	if m.Client == 0 {
		b = append(b, mutationFormat, byte(m.Op))
		b = binary.AppendUvarint(b, m.ReqID)
	} else {
		b = append(b, mutationFormatDedupe, byte(m.Op))
		b = binary.AppendUvarint(b, m.ReqID)
		b = binary.AppendUvarint(b, m.Client)
		b = binary.AppendUvarint(b, m.Seq)
	}
	b = appendBytes(b, []byte(m.Table))
	if m.Op.isMove() {
		b = m.Move.append(b)
	}
	switch m.Op {
	case OpPut, OpCheckAndPut:
		b = appendBytes(b, m.Row)
		b = binary.AppendUvarint(b, uint64(len(m.Cells)))
		for _, c := range m.Cells {
			b = appendBytes(b, []byte(c.Family))
			b = appendBytes(b, c.Qualifier)
			b = appendBytes(b, c.Value)
		}
	case OpDelete, OpCheckAndDelete:
		b = appendBytes(b, m.Row)
		b = append(b, byte(m.Delete.Scope))
		if m.Delete.Scope != ScopeRow {
			b = appendBytes(b, []byte(m.Delete.Family))
		}
		if m.Delete.Scope == ScopeColumn {
			b = appendBytes(b, m.Delete.Qualifier)
		}
	case OpCreateTable:
		b = binary.AppendUvarint(b, uint64(len(m.Families)))
		for _, f := range m.Families {
			b = appendBytes(b, []byte(f.Name))
			b = binary.AppendUvarint(b, uint64(f.MaxVersions))
		}
	}
	if m.Op == OpCheckAndPut || m.Op == OpCheckAndDelete {
		b = appendBytes(b, []byte(m.Cond.Family))
		b = appendBytes(b, m.Cond.Qualifier)
		if m.Cond.Absent {
			b = append(b, 1)
		} else {
			b = append(b, 0)
			b = appendBytes(b, m.Cond.Value)
		}
	}
	if len(b) > MaxMutationLen {
		return nil, invalidf("mutation of %d bytes exceeds %d", len(b), MaxMutationLen)
	}
	return b, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads an entry; the first error sticks.
type decoder struct {
	b   []byte
	err error
	// own: b is the decoder's own copy, never written, so bytes returns
	// slices of it rather than copies (one allocation per mutation
	// instead of one per field).
	own bool
	// last is the last string str returned: a put's cells mostly name
	// one family, decoded once.
	last string
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = invalidf("mutation: "+format, args...)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || n != uvarintLen(v) {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// bytes returns a length-prefixed string: a copy, or with own a slice
// of the decoder's copy (its capacity capped), so a mutation never
// aliases the entry.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length %d past the end", n)
		return nil
	}
	var s []byte
	if d.own {
		s = d.b[:n:n]
	} else {
		s = append([]byte{}, d.b[:n]...)
	}
	d.b = d.b[n:]
	return s
}

// str returns a length-prefixed string as a string.
func (d *decoder) str() string {
	b := d.bytes()
	if string(b) != d.last {
		d.last = string(b)
	}
	return d.last
}

// count reads a count of items each at least min bytes long.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(len(d.b)/min) {
		d.fail("count %d past the end", n)
		return 0
	}
	return int(n)
}

// DecodeMutation decodes an entry written by Encode. Whatever the input it
// returns an error or a mutation that passes Validate; it never panics.
func DecodeMutation(data []byte) (*Mutation, error) {
	if len(data) > MaxMutationLen {
		return nil, invalidf("mutation of %d bytes exceeds %d", len(data), MaxMutationLen)
	}
	d := &decoder{b: bytes.Clone(data), own: true}
	f := d.byte1()
	if d.err == nil && f != mutationFormat && f != mutationFormatDedupe {
		return nil, invalidf("mutation format %d", f)
	}
	m := &Mutation{Op: Op(d.byte1())}
	m.ReqID = d.uvarint()
	if f == mutationFormatDedupe {
		m.Client = d.uvarint()
		m.Seq = d.uvarint()
		if d.err == nil && m.Client == 0 {
			d.fail("format %d without a client id", f)
		}
	}
	m.Table = d.str()
	switch m.Op {
	case OpPut, OpCheckAndPut:
		m.Row = d.bytes()
		n := d.count(3)
		if n > 0 {
			m.Cells = make([]Cell, n)
		}
		for i := 0; i < n && d.err == nil; i++ {
			m.Cells[i] = Cell{Family: d.str(), Qualifier: d.bytes(), Value: d.bytes()}
		}
	case OpDelete, OpCheckAndDelete:
		m.Row = d.bytes()
		m.Delete.Scope = Scope(d.byte1())
		if m.Delete.Scope == ScopeFamily || m.Delete.Scope == ScopeColumn {
			m.Delete.Family = d.str()
		}
		if m.Delete.Scope == ScopeColumn {
			m.Delete.Qualifier = d.bytes()
		}
	case OpCreateTable:
		n := d.count(2)
		if n > 0 {
			m.Families = make([]FamilySpec, n)
		}
		for i := 0; i < n && d.err == nil; i++ {
			m.Families[i].Name = d.str()
			v := d.uvarint()
			if v > MaxVersionsKept {
				d.fail("family keeps %d versions", v)
			}
			m.Families[i].MaxVersions = uint32(v)
		}
	case OpDropTable:
	case OpFence, OpIngest, OpSeal, OpDropRange:
		m.Move = decodeMoveOp(d, m.Op)
	default:
		d.fail("unknown operation %d", m.Op)
	}
	if m.Op == OpCheckAndPut || m.Op == OpCheckAndDelete {
		m.Cond.Family = d.str()
		m.Cond.Qualifier = d.bytes()
		switch d.byte1() {
		case 0:
			m.Cond.Value = d.bytes()
		case 1:
			m.Cond.Absent = true
		default:
			d.fail("bad condition")
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}
