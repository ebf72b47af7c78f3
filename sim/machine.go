package sim

import (
	"encoding/binary"

	"github.com/corral-db/corral/internal/linmodel"
	"github.com/corral-db/corral/zab"
)

// machine is the replicated state machine: a hash chain over the applied
// entries, and regKeys versioned registers the register workload
// (workload.go) reads and writes. Applying an entry twice, skipping one or
// reordering two changes every later digest; the registers are a function
// of the applied sequence, so equal digests mean equal registers.
type machine struct {
	zxid   zab.Zxid
	digest uint64
	regs   [regKeys]linmodel.Register
}

// regKeys is the number of registers the workload uses.
const regKeys = 3

// Register operations (linmodel's model: a Read through the log is
// answered at its apply; a ConfirmedRead is answered from the leader's
// own state after a leadership confirmation, never logged) travel in
// entries encoded by encodeRegOp: 'R', the kind, the key, then the value
// and expected version as uvarints. Other entries (the background
// proposals) leave the registers alone.
func encodeRegOp(op linmodel.Op) []byte {
	b := []byte{'R', byte(op.Kind), byte(op.Key)}
	b = binary.AppendUvarint(b, uint64(op.Value))
	return binary.AppendUvarint(b, uint64(op.Expect))
}

func decodeRegOp(data []byte) (linmodel.Op, bool) {
	if len(data) < 5 || data[0] != 'R' || int(data[2]) >= regKeys {
		return linmodel.Op{}, false
	}
	op := linmodel.Op{Kind: linmodel.Kind(data[1]), Key: int(data[2])}
	v, n := binary.Uvarint(data[3:])
	if n <= 0 {
		return linmodel.Op{}, false
	}
	x, m := binary.Uvarint(data[3+n:])
	if m <= 0 {
		return linmodel.Op{}, false
	}
	op.Value, op.Expect = int64(v), int32(x)
	return op, true
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// apply applies e; for a register operation it returns the result its
// client gets.
func (m *machine) apply(e zab.Entry) (res linmodel.Result, isOp bool) {
	h := m.digest ^ fnvOffset
	z := uint64(e.Zxid)
	for range 8 {
		h = (h ^ (z & 0xff)) * fnvPrime
		z >>= 8
	}
	for _, c := range e.Data {
		h = (h ^ uint64(c)) * fnvPrime
	}
	m.digest = h
	m.zxid = e.Zxid
	op, ok := decodeRegOp(e.Data)
	if !ok {
		return linmodel.Result{}, false
	}
	return m.regs[op.Key].Apply(op), true
}

const machineSize = 16 + regKeys*12

func (m machine) encode() []byte {
	b := make([]byte, 0, machineSize)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.zxid))
	b = binary.LittleEndian.AppendUint64(b, m.digest)
	for _, r := range m.regs {
		b = binary.LittleEndian.AppendUint64(b, uint64(r.Value))
		b = binary.LittleEndian.AppendUint32(b, uint32(r.Version))
	}
	return b
}

func decodeMachine(b []byte) (machine, bool) {
	if len(b) != machineSize {
		return machine{}, false
	}
	m := machine{
		zxid:   zab.Zxid(binary.LittleEndian.Uint64(b)),
		digest: binary.LittleEndian.Uint64(b[8:]),
	}
	b = b[16:]
	for i := range m.regs {
		m.regs[i] = linmodel.Register{Value: int64(binary.LittleEndian.Uint64(b)), Version: int32(binary.LittleEndian.Uint32(b[8:]))}
		b = b[12:]
	}
	return m, true
}

func contentHash(data []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range data {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}
