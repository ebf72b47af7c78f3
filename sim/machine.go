package sim

import (
	"encoding/binary"

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
	regs   [regKeys]register
}

// regKeys is the number of registers the workload uses.
const regKeys = 3

// register is a versioned register: ZooKeeper's setData on one znode.
// Every write bumps the version; a CAS writes only at an expected version.
type register struct {
	value   int64
	version int32
}

// Register operations travel in entries encoded by encodeRegOp: 'R', the
// kind, the key, then the value and expected version as uvarints. Other
// entries (the background proposals) leave the registers alone.
type regKind uint8

const (
	regRead regKind = iota // a read through the log: answered at its apply
	regSet                 // set the value, whatever the version
	regCAS                 // set the value if the version is the expected one
	// regConfirmedRead is a read the leader answers from its own state
	// after a leadership confirmation (zab ConfirmLeadership), not
	// through the log.
	regConfirmedRead
)

type regOp struct {
	kind   regKind
	key    int
	value  int64
	expect int32
}

// regResult is what applying a register operation returns to its client.
type regResult struct {
	ok      bool  // set and CAS: written
	value   int64 // read: the value
	version int32 // read: the version; a write that is ok: the new version
}

func encodeRegOp(op regOp) []byte {
	b := []byte{'R', byte(op.kind), byte(op.key)}
	b = binary.AppendUvarint(b, uint64(op.value))
	return binary.AppendUvarint(b, uint64(op.expect))
}

func decodeRegOp(data []byte) (regOp, bool) {
	if len(data) < 5 || data[0] != 'R' || int(data[2]) >= regKeys {
		return regOp{}, false
	}
	op := regOp{kind: regKind(data[1]), key: int(data[2])}
	v, n := binary.Uvarint(data[3:])
	if n <= 0 {
		return regOp{}, false
	}
	x, m := binary.Uvarint(data[3+n:])
	if m <= 0 {
		return regOp{}, false
	}
	op.value, op.expect = int64(v), int32(x)
	return op, true
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// apply applies e; for a register operation it returns the result its
// client gets.
func (m *machine) apply(e zab.Entry) (res regResult, isOp bool) {
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
		return regResult{}, false
	}
	return m.regs[op.key].apply(op), true
}

func (r *register) apply(op regOp) regResult {
	switch op.kind {
	case regSet:
		r.value, r.version = op.value, r.version+1
		return regResult{ok: true, version: r.version}
	case regCAS:
		if r.version != op.expect {
			return regResult{}
		}
		r.value, r.version = op.value, r.version+1
		return regResult{ok: true, version: r.version}
	}
	return regResult{ok: true, value: r.value, version: r.version}
}

const machineSize = 16 + regKeys*12

func (m machine) encode() []byte {
	b := make([]byte, 0, machineSize)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.zxid))
	b = binary.LittleEndian.AppendUint64(b, m.digest)
	for _, r := range m.regs {
		b = binary.LittleEndian.AppendUint64(b, uint64(r.value))
		b = binary.LittleEndian.AppendUint32(b, uint32(r.version))
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
		m.regs[i] = register{value: int64(binary.LittleEndian.Uint64(b)), version: int32(binary.LittleEndian.Uint32(b[8:]))}
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
