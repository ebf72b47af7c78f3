package wire

import (
	"errors"
	"fmt"
)

// Record is a jute record: it appends itself to an Encoder and fills itself
// from a Decoder. Decode returns the decoder's sticky error, so after a
// failed Decode the record holds partial, meaningless values.
//
// Decoding never checks that the record used up its input: ZooKeeper
// ignores trailing bytes in a request frame, and so does this package
// (the optional readOnly byte of the handshake relies on the same rule).
type Record interface {
	Encode(e *Encoder)
	Decode(d *Decoder) error
}

// ErrUnknownOp is wrapped by NewRequest, NewResponse and DecodeRequest for
// an opcode a client may not send. The error also wraps CodeUnimplemented,
// so CodeOf maps it to the -6 that ZooKeeper answers.
var ErrUnknownOp = errors.New("wire: unknown opcode")

func unknownOp(op Op) error {
	return fmt.Errorf("%w %d: %w", ErrUnknownOp, int32(op), CodeUnimplemented)
}

// NewRequest returns a new, zero request record for op. Ops whose request
// has no body (ping, closeSession, whoAmI) yield (nil, nil). Ops that only
// exist inside the server (notification, createSession, error) and unknown
// numbers yield an error wrapping ErrUnknownOp.
func NewRequest(op Op) (Record, error) {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}, nil
	case OpCreateTTL:
		return &CreateTTLRequest{}, nil
	case OpDelete:
		return &DeleteRequest{}, nil
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return &PathWatchRequest{}, nil
	case OpSetData:
		return &SetDataRequest{}, nil
	case OpGetACL, OpSync, OpGetAllChildrenNumber, OpDeleteContainer:
		return &PathRequest{}, nil
	case OpSetACL:
		return &SetACLRequest{}, nil
	case OpCheck:
		return &CheckVersionRequest{}, nil
	case OpMulti, OpMultiRead:
		return &MultiRequest{}, nil
	case OpReconfig:
		return &ReconfigRequest{}, nil
	case OpCheckWatches, OpRemoveWatches:
		return &WatchesRequest{}, nil
	case OpAuth:
		return &AuthPacket{}, nil
	case OpSetWatches:
		return &SetWatches{}, nil
	case OpSetWatches2:
		return &SetWatches2{}, nil
	case OpSASL:
		return &GetSASLRequest{}, nil
	case OpGetEphemerals:
		return &GetEphemeralsRequest{}, nil
	case OpAddWatch:
		return &AddWatchRequest{}, nil
	case OpPing, OpCloseSession, OpWhoAmI:
		return nil, nil
	}
	return nil, unknownOp(op)
}

// DecodeRequest decodes the body of a request of type op (the RequestHeader
// already read from d). It returns:
//
//   - (nil, nil) for ops without a body: ping, closeSession, whoAmI;
//   - an error wrapping ErrUnknownOp and CodeUnimplemented for an opcode a
//     client may not send;
//   - an error wrapping ErrMarshalling (CodeMarshallingError) for a body
//     that does not decode, including a multi with an op type ZooKeeper
//     does not accept there or that mixes reads and writes (see
//     MultiRequest.CheckKind) — ZooKeeper reports those as marshalling
//     errors too;
//   - otherwise a pointer to the record: *CreateRequest for create,
//     create2 and createContainer; *CreateTTLRequest; *DeleteRequest;
//     *PathWatchRequest for exists, getData, getChildren, getChildren2;
//     *SetDataRequest; *PathRequest for getACL, sync, getAllChildrenNumber,
//     deleteContainer; *SetACLRequest; *CheckVersionRequest; *MultiRequest
//     for multi and multiRead; *ReconfigRequest; *WatchesRequest for
//     checkWatches and removeWatches; *AuthPacket; *SetWatches;
//     *SetWatches2; *GetSASLRequest; *GetEphemeralsRequest;
//     *AddWatchRequest.
func DecodeRequest(op Op, d *Decoder) (Record, error) {
	r, err := NewRequest(op)
	if err != nil || r == nil {
		return nil, err
	}
	if err := r.Decode(d); err != nil {
		return nil, err
	}
	if m, ok := r.(*MultiRequest); ok {
		if err := m.CheckKind(op); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// NewResponse returns a new, zero response record for a successful reply
// to op, for clients that decode replies. Ops whose successful reply has no
// body (delete, deleteContainer, checkWatches, removeWatches, auth,
// setWatches, setWatches2, ping, closeSession) yield (nil, nil); unknown
// ops an error wrapping ErrUnknownOp.
func NewResponse(op Op) (Record, error) {
	switch op {
	case OpCreate:
		return &CreateResponse{}, nil
	case OpCreate2, OpCreateContainer, OpCreateTTL:
		return &Create2Response{}, nil
	case OpExists, OpSetData, OpSetACL, OpCheck:
		return &StatResponse{}, nil
	case OpGetData, OpReconfig:
		return &GetDataResponse{}, nil
	case OpGetACL:
		return &GetACLResponse{}, nil
	case OpGetChildren:
		return &GetChildrenResponse{}, nil
	case OpGetChildren2:
		return &GetChildren2Response{}, nil
	case OpSync:
		return &SyncResponse{}, nil
	case OpMulti, OpMultiRead:
		return &MultiResponse{}, nil
	case OpSASL:
		return &SetSASLResponse{}, nil
	case OpGetEphemerals:
		return &GetEphemeralsResponse{}, nil
	case OpGetAllChildrenNumber:
		return &GetAllChildrenNumberResponse{}, nil
	case OpAddWatch:
		return &ErrorResponse{}, nil
	case OpWhoAmI:
		return &WhoAmIResponse{}, nil
	case OpDelete, OpDeleteContainer, OpCheckWatches, OpRemoveWatches,
		OpAuth, OpSetWatches, OpSetWatches2, OpPing, OpCloseSession:
		return nil, nil
	}
	return nil, unknownOp(op)
}
