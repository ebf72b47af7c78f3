package kv

import (
	"encoding/binary"
	"errors"
)

// Errors of operations on the schema and the data. Apply records them as
// a mutation's result (every replica the same); reads return them.
var (
	ErrNoTable     = errors.New("no such table")
	ErrNoFamily    = errors.New("no such column family")
	ErrTableExists = errors.New("table exists")
	ErrNotFound    = errors.New("not found")
)

// family is a column family of a table. Ids are allocated from one
// counter per store and never reused, so the data of a dropped table can
// never reappear under a new one.
type family struct {
	name        string
	id          uint32
	maxVersions uint32
	// oneKey: each column is one key holding its only version
	// (keys.go); set for a family that keeps one version in a table
	// whose descriptor says so.
	oneKey bool
}

// table is an immutable table descriptor; a schema change installs a new
// map of them.
type table struct {
	name     string
	id       uint32
	families []family // in creation order, which is their key order
	// oneKey: the table's families that keep one version use the
	// one-key layout. Every table created now does; a descriptor
	// written before the layout existed lacks the flag, and its data
	// stays versioned.
	oneKey bool
}

// Descriptor flags, a uvarint after the families (absent: none).
const tableFlagOneKey = 1

// newTable returns a table with the current layout.
func newTable(name string, id uint32) *table {
	return &table{name: name, id: id, oneKey: true}
}

// addFamily appends a family, its layout following the table's.
func (t *table) addFamily(name string, id, maxVersions uint32) {
	t.families = append(t.families, family{name: name, id: id, maxVersions: maxVersions, oneKey: t.oneKey && maxVersions <= 1})
}

func (t *table) family(name string) *family {
	for i := range t.families {
		if t.families[i].name == name {
			return &t.families[i]
		}
	}
	return nil
}

func (t *table) familyByID(id uint32) *family {
	for i := range t.families {
		if t.families[i].id == id {
			return &t.families[i]
		}
	}
	return nil
}

// TableInfo describes a table to callers.
type TableInfo struct {
	Name     string
	Families []FamilySpec
}

func (t *table) info() TableInfo {
	ti := TableInfo{Name: t.name}
	for _, f := range t.families {
		ti.Families = append(ti.Families, FamilySpec{Name: f.name, MaxVersions: f.maxVersions})
	}
	return ti
}

func encodeTable(t *table) []byte {
	b := binary.AppendUvarint(nil, uint64(t.id))
	b = binary.AppendUvarint(b, uint64(len(t.families)))
	for _, f := range t.families {
		b = appendBytes(b, []byte(f.name))
		b = binary.AppendUvarint(b, uint64(f.id))
		b = binary.AppendUvarint(b, uint64(f.maxVersions))
	}
	if t.oneKey {
		b = binary.AppendUvarint(b, tableFlagOneKey)
	}
	return b
}

func decodeTable(name string, v []byte) (*table, error) {
	d := &decoder{b: v}
	t := &table{name: name, id: uint32(d.uvarint())}
	n := d.count(3)
	fs := make([]family, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		fs = append(fs, family{name: string(d.bytes()), id: uint32(d.uvarint()), maxVersions: uint32(d.uvarint())})
	}
	if d.err == nil && len(d.b) > 0 {
		flags := d.uvarint()
		if flags&^tableFlagOneKey != 0 {
			d.fail("unknown table flags %#x", flags)
		}
		t.oneKey = flags&tableFlagOneKey != 0
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes after the table flags", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	for _, f := range fs {
		t.addFamily(f.name, f.id, f.maxVersions)
	}
	return t, nil
}
