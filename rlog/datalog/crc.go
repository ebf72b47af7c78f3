package datalog

// crcCombine returns the CRC-32C of A followed by B from crcA, the CRC of
// A, and crcB, the CRC of B, which is lenB bytes long: what
// crc32.Update(crcA, castagnoli, B) returns, without reading B. A caller
// that already checksummed a payload (the rlog reference does) saves the
// data log's second pass over it. hash/crc32 has no combine; this is
// zlib's crc32_combine (multiplication modulo the polynomial by
// x^(8·lenB), from a table of x^(2^k)), for the Castagnoli polynomial.
func crcCombine(crcA, crcB uint32, lenB int64) uint32 {
	return multModP(xPow2nModP(lenB, 3), crcA) ^ crcB
}

// castagnoliReversed is the Castagnoli polynomial, bit-reversed as
// hash/crc32 uses it.
const castagnoliReversed = 0x82f63b78

// multModP is a·b modulo the polynomial, in the reflected bit order.
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// x2n[k] is x^(2^k) modulo the polynomial; read-only after init.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for k := 1; k < len(t); k++ {
		p = multModP(p, p)
		t[k] = p
	}
	return t
}()

// xPow2nModP is x^(n·2^k) modulo the polynomial.
func xPow2nModP(n int64, k uint) uint32 {
	p := uint32(1) << 31 // x^0
	for ; n != 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(x2n[k&31], p)
		}
		k++
	}
	return p
}
