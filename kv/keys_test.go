package kv

import (
	"bytes"
	"slices"
	"testing"
)

// TestKeyOrder checks that data keys sort by row, then family, then
// qualifier, then version newest first, whatever bytes the strings hold.
func TestKeyOrder(t *testing.T) {
	type cell struct {
		row  string
		fam  uint32
		qual string
		ver  uint64
	}
	// In the order the keys must sort.
	want := []cell{
		{"", 1, "", 9},
		{"a", 1, "", 9},
		{"a", 1, "", 3},
		{"a", 1, "\x00", 9},
		{"a", 1, "\x00\x00", 1},
		{"a", 1, "\x00\x01", 1},
		{"a", 1, "b", 1},
		{"a", 2, "", 1},
		{"a", 2, "a", 5},
		{"a\x00", 1, "", 1},
		{"a\x00\xff", 1, "", 1},
		{"a\x01", 1, "", 1},
		{"ab", 1, "z", ^uint64(0)},
		{"ab", 1, "z", 1},
		{"ab", 1, "z", 0},
		{"b", 0, "", 0},
		{"\xff", 0, "", 0},
	}
	keys := make([][]byte, len(want))
	for i, c := range want {
		keys[i] = cellKey(7, []byte(c.row), c.fam, []byte(c.qual), c.ver)
	}
	shuffled := slices.Clone(keys)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, bytes.Compare)
	for i := range keys {
		if !bytes.Equal(shuffled[i], keys[i]) {
			p, _ := decodeCellKey(shuffled[i])
			t.Fatalf("position %d: got row %q fam %d qual %q ver %d, want %+v", i, p.row, p.family, p.qual, p.version, want[i])
		}
	}
	for i, k := range keys {
		p, err := decodeCellKey(k)
		if err != nil {
			t.Fatalf("decode %d: %v", i, err)
		}
		c := want[i]
		if string(p.row) != c.row || p.family != c.fam || string(p.qual) != c.qual || p.version != c.ver || p.table != 7 {
			t.Fatalf("decode %d: got %+v, want %+v", i, p, c)
		}
	}
}

// TestKeyRanges checks that a row's, a family's and a column's keys lie in
// the ranges deletes and reads use, and no other row's do.
func TestKeyRanges(t *testing.T) {
	rows := []string{"", "a", "a\x00", "a\x00\x01", "a\x01", "ab", "b"}
	for _, r := range rows {
		lo := rowPrefix(1, []byte(r))
		hi := escapedEnd(lo)
		for _, o := range rows {
			for _, q := range []string{"", "q", "\x00"} {
				k := cellKey(1, []byte(o), 3, []byte(q), 5)
				in := bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0
				if in != (o == r) {
					t.Fatalf("row %q range holds key of row %q: %v", r, o, in)
				}
				cl := columnPrefix(1, []byte(o), 3, []byte(q))
				if bytes.Compare(k, cl) < 0 || bytes.Compare(k, escapedEnd(cl)) >= 0 {
					t.Fatalf("column range of %q/%q misses its key", o, q)
				}
				fp := familyPrefix(1, []byte(o), 3)
				if bytes.Compare(k, fp) < 0 || bytes.Compare(k, prefixEnd(fp)) >= 0 {
					t.Fatalf("family range of %q misses its key", o)
				}
			}
			other := cellKey(1, []byte(o), 4, nil, 1)
			fp := familyPrefix(1, []byte(r), 3)
			if bytes.Compare(other, fp) >= 0 && bytes.Compare(other, prefixEnd(fp)) < 0 {
				t.Fatalf("family 3 range of %q holds family 4 of %q", r, o)
			}
		}
	}
	if k := cellKey(2, nil, 0, nil, 0); bytes.Compare(k, prefixEnd(tablePrefix(1))) < 0 {
		t.Fatalf("table 2 key inside table 1's range")
	}
}

func TestDecodeCellKeyRejectsGarbage(t *testing.T) {
	for _, k := range [][]byte{nil, {prefixData}, {prefixData, 0, 0, 0, 1, 'a', 0}, {prefixData, 0, 0, 0, 1, 'a', 0, 7}, append(cellKey(1, nil, 1, nil, 1), 0)} {
		if _, err := decodeCellKey(k); err == nil {
			t.Fatalf("decoded %x", k)
		}
	}
}
