package txn

import "github.com/corral-db/corral/wire"

// Header is the per-transaction metadata: who asked, when, and its zxid.
type Header struct {
	SessionID int64
	Cxid      int32
	Zxid      int64
	Time      int64 // ms since epoch, leader's clock
	Type      wire.Op
}

// Txn is one state change. Type selects which fields are meaningful:
//
//	OpCreate, OpCreate2          Path Data ACL Ephemeral ParentCVersion
//	OpCreateContainer            Path Data ACL ParentCVersion
//	OpCreateTTL                  Path Data ACL ParentCVersion TTL
//	OpDelete, OpDeleteContainer  Path
//	OpSetData                    Path Data Version (the new version)
//	OpSetACL                     Path ACL Version (the new aversion)
//	OpCheck                      Path Version
//	OpMulti                      Ops (all share the header's zxid)
//	OpCreateSession              Timeout
//	OpCloseSession               Paths (the header's session's ephemerals)
//	OpError                      Err
//
// One struct rather than an interface per type keeps decoding free of
// per-type allocations and a multi a plain slice.
type Txn struct {
	Type           wire.Op
	Path           string
	Data           []byte
	ACL            []wire.ACL
	Ephemeral      bool
	ParentCVersion int32
	TTL            int64
	Version        int32
	Timeout        int32
	Err            wire.Code
	Ops            []Txn
	// Paths lists, for OpCloseSession, the ephemeral nodes the leader
	// decided to delete (ZooKeeper 3.9's CloseSessionTxn.paths2Delete),
	// sorted. Naming them makes the txn idempotent: replayed over a fuzzy
	// snapshot that missed an ephemeral, the delete still advances the
	// parent's pzxid. Nil means "whatever the tree holds for the session".
	Paths []string
}
