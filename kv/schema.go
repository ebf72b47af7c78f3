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
}

// table is an immutable table descriptor; a schema change installs a new
// map of them.
type table struct {
	name     string
	id       uint32
	families []family // in creation order, which is their key order
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
	return b
}

func decodeTable(name string, v []byte) (*table, error) {
	d := &decoder{b: v}
	t := &table{name: name, id: uint32(d.uvarint())}
	n := d.count(3)
	for i := 0; i < n && d.err == nil; i++ {
		f := family{name: string(d.bytes()), id: uint32(d.uvarint()), maxVersions: uint32(d.uvarint())}
		t.families = append(t.families, f)
	}
	if d.err != nil {
		return nil, d.err
	}
	return t, nil
}
