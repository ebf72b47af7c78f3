package kvserver

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/corral-db/corral/kv"
	"github.com/corral-db/corral/zab"
)

// A member's temperature travels to the other members in a zab.MsgDriver
// (the driver's own traffic on the replication links), in Entries[0].Data:
//
//	'T' 1 | heat (float64 bits, 8 B BE) | flags (1 B) |
//	L0 sublevels, data-rewriting compactions running, compaction debt
//	(uvarints)
//
// flags: 1 a compaction waits on a hold, 2 compactions are held, 4 L0 is
// near the write stall. The decoder takes nothing else.
const (
	heatKind    = 'T'
	heatVersion = 1

	heatPending   = 1
	heatHeld      = 2
	heatNearStall = 4
)

var errBadHeat = errors.New("kvserver: malformed temperature message")

func encodeHeat(t kv.Temperature) []byte {
	b := make([]byte, 0, 2+8+1+3*binary.MaxVarintLen64)
	b = append(b, heatKind, heatVersion)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(t.Heat))
	var f byte
	if t.Pending {
		f |= heatPending
	}
	if t.Held {
		f |= heatHeld
	}
	if t.NearStall {
		f |= heatNearStall
	}
	b = append(b, f)
	b = binary.AppendUvarint(b, uint64(max(t.L0Sublevels, 0)))
	b = binary.AppendUvarint(b, uint64(max(t.Compacting, 0)))
	b = binary.AppendUvarint(b, t.CompactionDebt)
	return b
}

func decodeHeat(b []byte) (kv.Temperature, error) {
	var t kv.Temperature
	if len(b) < 11 || b[0] != heatKind || b[1] != heatVersion {
		return t, errBadHeat
	}
	t.Heat = math.Float64frombits(binary.BigEndian.Uint64(b[2:10]))
	if math.IsNaN(t.Heat) || math.IsInf(t.Heat, 0) || t.Heat < 0 {
		return t, errBadHeat
	}
	f := b[10]
	if f&^(heatPending|heatHeld|heatNearStall) != 0 {
		return t, errBadHeat
	}
	t.Pending, t.Held, t.NearStall = f&heatPending != 0, f&heatHeld != 0, f&heatNearStall != 0
	b = b[11:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		// Canonical varints only: n bytes must be what v takes.
		if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
			return t, errBadHeat
		}
		vals[i], b = v, b[n:]
	}
	if len(b) != 0 || vals[0] > math.MaxInt32 || vals[1] > math.MaxInt64 {
		return t, errBadHeat
	}
	t.L0Sublevels, t.Compacting, t.CompactionDebt = int32(vals[0]), int64(vals[1]), vals[2]
	return t, nil
}

func heatMessage(from, to uint64, t kv.Temperature) zab.Message {
	return zab.Message{Type: zab.MsgDriver, From: from, To: to, Entries: []zab.Entry{{Data: encodeHeat(t)}}}
}
