package sim

import (
	"encoding/binary"

	"github.com/corral-db/corral/zab"
)

// machine is the replicated state machine: a hash chain over the applied
// entries. Applying an entry twice, skipping one or reordering two changes
// every later digest.
type machine struct {
	zxid   zab.Zxid
	digest uint64
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (m *machine) apply(e zab.Entry) {
	h := m.digest ^ fnvOffset
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(e.Zxid))
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	for _, c := range e.Data {
		h = (h ^ uint64(c)) * fnvPrime
	}
	m.digest = h
	m.zxid = e.Zxid
}

func (m machine) encode() []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(m.zxid))
	binary.LittleEndian.PutUint64(b[8:], m.digest)
	return b
}

func decodeMachine(b []byte) machine {
	if len(b) != 16 {
		return machine{}
	}
	return machine{
		zxid:   zab.Zxid(binary.LittleEndian.Uint64(b)),
		digest: binary.LittleEndian.Uint64(b[8:]),
	}
}

func contentHash(data []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range data {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}
