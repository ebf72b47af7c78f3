package datalog

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRCCombineMatchesOnePass(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 200_000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, c := range []struct{ a, b int }{
		{0, 0}, {0, 1}, {1, 0}, {24, 0}, {24, 1}, {24, 7}, {24, 64 << 10}, {3, 65537}, {1000, 1}, {24, 199_976},
	} {
		a, b := buf[:c.a], buf[c.a:c.a+c.b]
		want := crc32.Update(crc32.Checksum(a, castagnoli), castagnoli, b)
		if got := crcCombine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b))); got != want {
			t.Errorf("combine of %d and %d bytes = %08x, want %08x", c.a, c.b, got, want)
		}
	}
	for i := 0; i < 200; i++ {
		na, nb := r.IntN(100), r.IntN(5000)
		a, b := buf[:na], buf[na:na+nb]
		want := crc32.Update(crc32.Checksum(a, castagnoli), castagnoli, b)
		if got := crcCombine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(nb)); got != want {
			t.Fatalf("combine of %d and %d bytes = %08x, want %08x", na, nb, got, want)
		}
	}
}

func TestRecordHeaderChecksIsTheOnePassChecksum(t *testing.T) {
	payload := []byte("a record's payload, checksummed once")
	m := Meta{Zxid: 0x100000007, Log: 3, Offset: 4096}
	h := encodeRecordHeader(m, len(payload), PayloadSum(payload))
	p, st, why := parseRecordHeader(h[:], int64(len(payload)))
	if st != recOK || !checkPayload(h[:], p, payload) {
		t.Fatalf("header %v %s does not check against its payload", st, why)
	}
	payload[0] ^= 1
	if checkPayload(h[:], p, payload) {
		t.Error("a changed payload passed the record check")
	}
	// A record encoded whole (appendRecord, the fuzz and scan tests') and
	// one from the combined checksum are the same bytes.
	payload[0] ^= 1
	whole := appendRecord(nil, m, payload)
	if string(whole[:recordHeaderSize]) != string(h[:]) {
		t.Errorf("headers differ: %x vs %x", whole[:recordHeaderSize], h)
	}
}

func BenchmarkRecordChecksum(b *testing.B) {
	payload := make([]byte, 64<<10)
	m := Meta{Zxid: 1, Log: 1, Offset: 0}
	sum := PayloadSum(payload)
	b.Run("combined", func(b *testing.B) {
		for b.Loop() {
			encodeRecordHeader(m, len(payload), sum)
		}
	})
	b.Run("second-pass", func(b *testing.B) {
		var h [recordHeaderSize]byte
		for b.Loop() {
			c := crc32.Update(0, castagnoli, h[8:])
			crc32.Update(c, castagnoli, payload)
		}
	})
}
