package wire

import (
	"errors"
	"fmt"
)

// multi (14) and multiRead (22), PROTOCOL §9. Sub-operations and results
// are held by value in unions rather than as interfaces, so decoding a
// multi allocates only its slice (reused across calls) and the strings and
// buffers it carries.

// ErrBadMultiOp is wrapped, together with ErrMarshalling, by the errors for
// a sub-operation or sub-result type that may not appear in a multi. The
// server answers those with CodeMarshallingError, as ZooKeeper does
// (MultiOperationRecord throws IOException("Invalid type of op"), which
// the request processors report as a marshalling error).
var ErrBadMultiOp = errors.New("wire: op type not allowed in multi")

// MultiOp is one sub-operation of a MultiRequest. Type is the op type read
// from its MultiHeader and selects the field that holds the record; the
// other fields are zero.
type MultiOp struct {
	Type Op
	// Create holds OpCreate, OpCreate2, OpCreateContainer (a CreateRequest
	// on the wire) and OpCreateTTL (a CreateTTLRequest). TTL is only encoded
	// and decoded for OpCreateTTL.
	Create CreateTTLRequest
	// Delete holds OpDelete.
	Delete DeleteRequest
	// SetData holds OpSetData.
	SetData SetDataRequest
	// Check holds OpCheck.
	Check CheckVersionRequest
	// Read holds OpGetData and OpGetChildren (multiRead only). Watch is
	// carried on the wire but ZooKeeper ignores it inside multiRead.
	Read PathWatchRequest
}

// Path returns the path of whichever record Type selects.
func (o *MultiOp) Path() string {
	switch o.Type {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL:
		return o.Create.Path
	case OpDelete:
		return o.Delete.Path
	case OpSetData:
		return o.SetData.Path
	case OpCheck:
		return o.Check.Path
	case OpGetData, OpGetChildren:
		return o.Read.Path
	}
	return ""
}

// EffectiveType is the op type ZooKeeper actually executes for this
// sub-operation. For the create family it ignores the wire type and
// derives it from Flags, as Java's Op.create does when it rebuilds the
// operation: container mode → OpCreateContainer, TTL modes →
// OpCreateTTL, anything else (including invalid flags) → OpCreate. So a
// create2 inside a multi is answered with a plain create result (path
// only), and a createTTL whose flags are not a TTL mode runs as a create.
// Other ops return Type.
func (o *MultiOp) EffectiveType() Op {
	switch o.Type {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL:
		switch o.Create.Flags {
		case ModeContainer:
			return OpCreateContainer
		case ModePersistentWithTTL, ModePersistentSequentialWithTTL:
			return OpCreateTTL
		}
		return OpCreate
	}
	return o.Type
}

// isMultiWrite reports whether t may appear in a multi (14).
func isMultiWrite(t Op) bool {
	switch t {
	case OpCreate, OpCreate2, OpCreateTTL, OpCreateContainer, OpDelete, OpSetData, OpCheck:
		return true
	}
	return false
}

// isMultiRead reports whether t may appear in a multiRead (22).
func isMultiRead(t Op) bool { return t == OpGetData || t == OpGetChildren }

// encodeMultiEnd writes MultiHeader{-1, true, -1}, which terminates both
// the request and the response sequence.
func encodeMultiEnd(e *Encoder) {
	e.Int(int32(OpError))
	e.Bool(true)
	e.Int(-1)
}

// MultiRequest is the body of multi and multiRead.
type MultiRequest struct {
	Ops []MultiOp
}

// Encode writes each op as MultiHeader{Type, false, -1} and its record,
// then the terminator. An op of a type not allowed in a multi is written
// with no record; the server will reject it.
func (m *MultiRequest) Encode(e *Encoder) {
	for i := range m.Ops {
		o := &m.Ops[i]
		h := MultiHeader{Type: o.Type, Err: -1}
		h.Encode(e)
		switch o.Type {
		case OpCreate, OpCreate2, OpCreateContainer:
			o.Create.CreateRequest.Encode(e)
		case OpCreateTTL:
			o.Create.Encode(e)
		case OpDelete:
			o.Delete.Encode(e)
		case OpSetData:
			o.SetData.Encode(e)
		case OpCheck:
			o.Check.Encode(e)
		case OpGetData, OpGetChildren:
			o.Read.Encode(e)
		}
	}
	encodeMultiEnd(e)
}

// Decode reads sub-operations until a MultiHeader with Done set (its type
// and err are ignored, as in ZooKeeper). It accepts every type that may
// appear in either a multi or a multiRead, like ZooKeeper's
// MultiOperationRecord; use CheckKind to hold the ops to one kind. Any
// other type is an error wrapping ErrMarshalling and ErrBadMultiOp. The Ops
// slice is reused.
func (m *MultiRequest) Decode(d *Decoder) error {
	m.Ops = m.Ops[:0]
	var h MultiHeader
	for {
		if h.Decode(d) != nil {
			return d.Err()
		}
		if h.Done {
			return nil
		}
		m.Ops = append(m.Ops, MultiOp{Type: h.Type})
		o := &m.Ops[len(m.Ops)-1]
		switch h.Type {
		case OpCreate, OpCreate2, OpCreateContainer:
			_ = o.Create.CreateRequest.Decode(d)
		case OpCreateTTL:
			_ = o.Create.Decode(d)
		case OpDelete:
			_ = o.Delete.Decode(d)
		case OpSetData:
			_ = o.SetData.Decode(d)
		case OpCheck:
			_ = o.Check.Decode(d)
		case OpGetData, OpGetChildren:
			_ = o.Read.Decode(d)
		default:
			d.fail("%w: type %d at op %d", ErrBadMultiOp, int32(h.Type), len(m.Ops)-1)
		}
		if d.Err() != nil {
			return d.Err()
		}
	}
}

// CheckKind verifies that every op suits the request type: writes only in
// a multi (OpMulti), getData/getChildren only in a multiRead
// (OpMultiRead). A mismatch is an error wrapping ErrMarshalling and
// ErrBadMultiOp; ZooKeeper fails such a request with a marshalling error
// ("Mixing different kind of ops" / "Invalid type of readOp").
func (m *MultiRequest) CheckKind(op Op) error {
	allowed := isMultiWrite
	switch op {
	case OpMulti:
	case OpMultiRead:
		allowed = isMultiRead
	default:
		return unknownOp(op)
	}
	for i := range m.Ops {
		if !allowed(m.Ops[i].Type) {
			return fmt.Errorf("%w: %w: type %d at op %d of a request of type %d",
				ErrMarshalling, ErrBadMultiOp, int32(m.Ops[i].Type), i, int32(op))
		}
	}
	return nil
}

// MultiResult is one sub-result of a MultiResponse. Type selects which
// fields are meaningful:
//
//	OpCreate                  Path
//	OpCreate2                 Path, Stat
//	OpDelete, OpCheck         nothing
//	OpSetData                 Stat
//	OpGetData                 Data, Stat
//	OpGetChildren             Children
//	OpError                   Err
//
// When encoding, OpCreateTTL and OpCreateContainer are written as
// OpCreate2 and OpDeleteContainer as OpDelete, the result types ZooKeeper
// uses for them; decoding therefore never yields those types. Any other
// type is encoded as an OpError result with CodeSystemError, so a server
// bug cannot produce a frame the client fails to parse.
type MultiResult struct {
	Type     Op
	Err      Code
	Path     string
	Stat     Stat
	Data     []byte
	Children []string
}

// MultiResponse is the body of a multi or multiRead reply. Its ReplyHeader
// err is 0 even when a sub-operation failed (PROTOCOL §9).
type MultiResponse struct {
	Results []MultiResult
}

// Encode writes each result as MultiHeader{type, false, err} and its body,
// then the terminator; err is 0 except for error results, which repeat
// their code in an ErrorResponse body.
func (m *MultiResponse) Encode(e *Encoder) {
	for i := range m.Results {
		m.Results[i].encode(e)
	}
	encodeMultiEnd(e)
}

func (r *MultiResult) encode(e *Encoder) {
	t := r.Type
	switch t {
	case OpCreateTTL, OpCreateContainer:
		t = OpCreate2
	case OpDeleteContainer:
		t = OpDelete
	case OpCreate, OpCreate2, OpDelete, OpCheck, OpSetData, OpGetData, OpGetChildren, OpError:
	default:
		h := MultiHeader{Type: OpError, Err: CodeSystemError}
		h.Encode(e)
		e.Int(int32(CodeSystemError))
		return
	}
	h := MultiHeader{Type: t}
	if t == OpError {
		h.Err = r.Err
	}
	h.Encode(e)
	switch t {
	case OpCreate:
		e.String(r.Path)
	case OpCreate2:
		e.String(r.Path)
		e.Stat(&r.Stat)
	case OpSetData:
		e.Stat(&r.Stat)
	case OpGetData:
		e.Buffer(r.Data)
		e.Stat(&r.Stat)
	case OpGetChildren:
		e.Strings(r.Children)
	case OpError:
		e.Int(int32(r.Err))
	}
}

// Decode reads results until a MultiHeader with Done set. An error
// result's code is taken from its ErrorResponse body, as the Java client
// does. A result type that ZooKeeper never sends is an error wrapping
// ErrMarshalling and ErrBadMultiOp. The Results slice is reused.
func (m *MultiResponse) Decode(d *Decoder) error {
	m.Results = m.Results[:0]
	var h MultiHeader
	for {
		if h.Decode(d) != nil {
			return d.Err()
		}
		if h.Done {
			return nil
		}
		m.Results = append(m.Results, MultiResult{Type: h.Type})
		r := &m.Results[len(m.Results)-1]
		switch h.Type {
		case OpCreate:
			r.Path = d.String()
		case OpCreate2:
			r.Path = d.String()
			d.Stat(&r.Stat)
		case OpDelete, OpCheck:
		case OpSetData:
			d.Stat(&r.Stat)
		case OpGetData:
			r.Data = d.Buffer()
			d.Stat(&r.Stat)
		case OpGetChildren:
			r.Children = d.Strings()
		case OpError:
			r.Err = Code(d.Int())
		default:
			d.fail("%w: result type %d at result %d", ErrBadMultiOp, int32(h.Type), len(m.Results)-1)
		}
		if d.Err() != nil {
			return d.Err()
		}
	}
}

// FirstError returns the code of the first failed sub-result, or CodeOK.
// A failed multi reports CodeOK for the ops before the failing one and
// CodeRuntimeInconsistency after it, so the first non-zero code is the
// cause.
func (m *MultiResponse) FirstError() Code {
	for i := range m.Results {
		if r := &m.Results[i]; r.Type == OpError && r.Err != CodeOK {
			return r.Err
		}
	}
	return CodeOK
}
