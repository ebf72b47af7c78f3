package server

import (
	"sync/atomic"
	"time"

	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/txn"
	"github.com/corral-db/corral/wire"
)

type requestKind uint8

const (
	kindRead requestKind = iota
	kindWrite
	kindUnknown // unknown opcode: answered -6 in order
	kindBadBody // body failed to decode: answered with a marshalling error
)

// request is one client (or internal) request on its way through the
// server. Fields after the first block are owned by one pipeline stage at a
// time: prep fills hdr and tx, apply fills res and sets done.
type request struct {
	c    *conn // nil for internal requests (expiry, reaper)
	xid  int32
	op   wire.Op
	sid  int64
	rec  wire.Record
	kind requestKind
	auth []wire.Id
	recv time.Time
	// from is the learner that forwarded the request to this leader; 0
	// for a request of this server's own (its connections, internal).
	from uint64
	// proposed is when the leader proposed the request (quorum_ack_latency).
	proposed time.Time
	// timeout is the negotiated timeout of a createSession.
	timeout int32
	// slot: the request holds a pipeline slot, released when answered.
	slot bool
	// claimed is set (under c.mu) by the goroutine answering the request.
	claimed bool

	hdr txn.Header
	tx  txn.Txn
	// changes are the paths whose pending change records this request
	// added, removed from the pending table once it is applied.
	changes []string

	res  datatree.Result
	done atomic.Bool
	// onApplied runs on the apply goroutine, under the tree's write lock,
	// right after the transaction is applied (session bookkeeping).
	onApplied func(r *request)
	// install, when set, is a tree from the leader's snapshot that apply
	// puts in place of its own (the request carries nothing else).
	install *datatree.Tree
	// onDone runs on the apply goroutine after the batch is applied,
	// instead of the ordinary reply (handshake, internal requests).
	onDone func(r *request)
}

// isWrite tells the ops that go through prep and the log.
func isWrite(op wire.Op) bool {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL,
		wire.OpDelete, wire.OpDeleteContainer, wire.OpSetData, wire.OpSetACL,
		wire.OpCheck, wire.OpMulti, wire.OpReconfig, wire.OpCloseSession:
		return true
	}
	return false
}

// opMnemonic is the lop= abbreviation ZooKeeper's cons prints.
func opMnemonic(op wire.Op) string {
	switch op {
	case wire.OpAddWatch:
		return "ADDW"
	case wire.OpCheck:
		return "CHEC"
	case wire.OpCheckWatches:
		return "CHKW"
	case wire.OpCloseSession:
		return "CLOS"
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return "CREA"
	case wire.OpDelete, wire.OpDeleteContainer:
		return "DELE"
	case wire.OpExists:
		return "EXIS"
	case wire.OpGetACL:
		return "GETA"
	case wire.OpGetAllChildrenNumber:
		return "GETACN"
	case wire.OpGetChildren, wire.OpGetChildren2:
		return "GETC"
	case wire.OpGetData:
		return "GETD"
	case wire.OpGetEphemerals:
		return "GETE"
	case wire.OpWhoAmI:
		return "HOMI"
	case wire.OpMultiRead:
		return "MLTR"
	case wire.OpMulti:
		return "MULT"
	case wire.OpPing:
		return "PING"
	case wire.OpReconfig:
		return "RECO"
	case wire.OpRemoveWatches:
		return "REMW"
	case wire.OpCreateSession:
		return "SESS"
	case wire.OpSetACL:
		return "SETA"
	case wire.OpSetData:
		return "SETD"
	case wire.OpSetWatches:
		return "SETW"
	case wire.OpSetWatches2:
		return "STW2"
	case wire.OpSync:
		return "SYNC"
	}
	return "NA"
}
