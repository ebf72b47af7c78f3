package wire

import (
	"encoding/binary"
	"testing"
)

func TestFourLetterWords(t *testing.T) {
	words := []string{"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk",
		"srst", "srvr", "stat", "wchc", "wchp", "wchs", "mntr", "isro", "hash"}
	for _, w := range words {
		n := int32(binary.BigEndian.Uint32([]byte(w)))
		got, ok := FourLetterWord(n)
		if !ok || got != w {
			t.Errorf("FourLetterWord(%q as %#x) = %q, %v", w, n, got, ok)
		}
		if c, ok := FourLetterCode(w); !ok || c != n {
			t.Errorf("FourLetterCode(%q) = %#x, %v", w, c, ok)
		}
		// No word could be mistaken for a legal frame length.
		if CheckFrameLength(n, 0) == nil {
			t.Errorf("%q (%d) is a legal frame length", w, n)
		}
	}
	if got, _ := FourLetterWord(0x72756f6b); got != "ruok" {
		t.Errorf("0x72756f6b = %q", got)
	}

	var telnet uint32 = 0xfff4fffd
	if got, ok := FourLetterWord(int32(telnet)); !ok || got != TelnetClose {
		t.Errorf("telnet close = %q, %v", got, ok)
	}

	for _, s := range []string{"xxxx", "RUOK", "ruo\n", "\x00\x00\x00\x2d", "kill"} {
		n := int32(binary.BigEndian.Uint32([]byte(s)))
		if w, ok := FourLetterWord(n); ok {
			t.Errorf("%q recognised as %q", s, w)
		}
		if _, ok := FourLetterCode(s); ok {
			t.Errorf("FourLetterCode(%q) ok", s)
		}
	}
	for _, s := range []string{"", "ruo", "ruokk"} {
		if _, ok := FourLetterCode(s); ok {
			t.Errorf("FourLetterCode(%q) ok", s)
		}
	}
}
