package rlog

import "testing"

func TestControlRecord(t *testing.T) {
	c := Control{Start: 3, End: 3009, Sealed: true}
	if got := string(c.Encode()); got != "zkrl1 start=3 end=3009 sealed=true" {
		t.Fatalf("Encode: %q", got)
	}
	if back, err := ParseControl(c.Encode()); err != nil || back != c {
		t.Fatalf("ParseControl: %+v, %v", back, err)
	}
	if z, err := ParseControl(nil); err != nil || z != (Control{}) {
		t.Fatalf("empty data: %+v, %v", z, err)
	}
	for _, bad := range []string{
		"zkrl1", "zkrl1 start=1 end=0 sealed=false", "zkrl1 start=-1 end=0 sealed=false",
		"zkrl1 start=0 end=0 sealed=maybe", "zkrl1 start=0 end=0 other=1", "zkrl1 start=0 start=0 end=0",
		"zkrl1 start=0 end=0 sealed=false extra", "zkrl2 start=0 end=0 sealed=false", "zkrl1 start end=0 sealed=false",
	} {
		if _, err := ParseControl([]byte(bad)); err == nil {
			t.Errorf("ParseControl(%q) succeeded", bad)
		}
	}
	open := Control{Start: 2, End: 10}
	for _, tc := range []struct {
		old, next Control
		ok        bool
	}{
		{open, Control{Start: 2, End: 20}, true},
		{open, Control{Start: 8, End: 10}, true},
		{open, Control{Start: 2, End: 10, Sealed: true}, true},
		{open, Control{Start: 1, End: 10}, false},
		{open, Control{Start: 2, End: 9}, false},
		{Control{End: 10, Sealed: true}, Control{End: 10}, false},
		{Control{End: 10, Sealed: true}, Control{End: 11, Sealed: true}, false},
		{Control{End: 10, Sealed: true}, Control{Start: 10, End: 10, Sealed: true}, true},
	} {
		if err := CheckControl(tc.old, tc.next); (err == nil) != tc.ok {
			t.Errorf("CheckControl(%+v, %+v) = %v, want ok=%v", tc.old, tc.next, err, tc.ok)
		}
	}
	if n := EntryName(3006); n != "00000000000000003006" {
		t.Fatalf("EntryName: %q", n)
	}
	for name, want := range map[string]int64{"00000000000000003006": 3006, "e-0000000001": -1, "0000000000000000300x": -1, "+0000000000000003006": -1} {
		got, ok := ParseEntryName(name)
		if (want >= 0) != ok || ok && got != want {
			t.Errorf("ParseEntryName(%q) = %d, %v", name, got, ok)
		}
	}
}

// FuzzParseControl: any bytes parse or fail without panicking, and a
// record that parses is canonical up to spacing: encoding it parses back
// to the same record.
func FuzzParseControl(f *testing.F) {
	for _, s := range []string{"", "zkrl1 start=0 end=0 sealed=false", "zkrl1 start=3 end=9 sealed=true", "zkrl1 end=1 start=0 sealed=1", "zkrl1 start=9223372036854775807 end=9223372036854775807 sealed=F"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseControl(b)
		if err != nil {
			return
		}
		back, err := ParseControl(c.Encode())
		if err != nil || back != c {
			t.Fatalf("%q parsed to %+v, which encodes to %q and parses to %+v, %v", b, c, c.Encode(), back, err)
		}
		if c.Start < 0 || c.End < c.Start {
			t.Fatalf("%q parsed to %+v", b, c)
		}
	})
}
