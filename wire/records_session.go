package wire

// Records that frame a connection rather than touch the tree: the
// handshake, the per-frame headers, auth, SASL, watch re-registration and
// notifications (PROTOCOL §3, §4, §6).

// ConnectRequest is the first frame a client sends (no RequestHeader).
//
// The trailing readOnly byte is optional on the wire: go-zookeeper and
// node-zookeeper-client end the record after Passwd. HasReadOnly records
// whether the frame carried it, so the server can mirror its presence in
// the ConnectResponse exactly as ZooKeeper's ProtocolManager does.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	Timeout         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	// HasReadOnly is set by Decode iff a byte followed Passwd; Encode writes
	// ReadOnly only when it is set.
	HasReadOnly bool
}

func (r *ConnectRequest) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Long(r.LastZxidSeen)
	e.Int(r.Timeout)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

func (r *ConnectRequest) Decode(d *Decoder) error {
	r.ProtocolVersion = d.Int()
	r.LastZxidSeen = d.Long()
	r.Timeout = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.HasReadOnly = optionalBool(d)
	return d.Err()
}

// ConnectResponse is the server's first frame (no ReplyHeader). ReadOnly is
// optional by the same rule as in ConnectRequest.
type ConnectResponse struct {
	ProtocolVersion int32
	Timeout         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	// HasReadOnly is set by Decode iff a byte followed Passwd; Encode writes
	// ReadOnly only when it is set. A server sets it to the request's.
	HasReadOnly bool
}

func (r *ConnectResponse) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Int(r.Timeout)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

func (r *ConnectResponse) Decode(d *Decoder) error {
	r.ProtocolVersion = d.Int()
	r.Timeout = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	r.ReadOnly, r.HasReadOnly = optionalBool(d)
	return d.Err()
}

// optionalBool reads a trailing boolean if the record has a byte left, the
// way ProtocolManager tries readBool and treats EOF as "old client".
func optionalBool(d *Decoder) (v, present bool) {
	if d.Err() != nil || d.Remaining() < 1 {
		return false, false
	}
	return d.Bool(), true
}

// RequestHeader precedes every client frame after the handshake.
type RequestHeader struct {
	Xid  int32
	Type Op
}

// RequestHeaderSize is the encoded size of a RequestHeader.
const RequestHeaderSize = 8

func (h *RequestHeader) Encode(e *Encoder) {
	e.Int(h.Xid)
	e.Int(int32(h.Type))
}

func (h *RequestHeader) Decode(d *Decoder) error {
	h.Xid = d.Int()
	h.Type = Op(d.Int())
	return d.Err()
}

// ReplyHeader precedes every server frame after the handshake. When Err is
// not CodeOK the frame carries no body (multi excepted, PROTOCOL §9).
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  Code
}

// ReplyHeaderSize is the encoded size of a ReplyHeader.
const ReplyHeaderSize = 16

func (h *ReplyHeader) Encode(e *Encoder) {
	e.Int(h.Xid)
	e.Long(h.Zxid)
	e.Int(int32(h.Err))
}

func (h *ReplyHeader) Decode(d *Decoder) error {
	h.Xid = d.Int()
	h.Zxid = d.Long()
	h.Err = Code(d.Int())
	return d.Err()
}

// AuthPacket is the body of an auth (100) request. Type is always 0.
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

func (r *AuthPacket) Encode(e *Encoder) {
	e.Int(r.Type)
	e.String(r.Scheme)
	e.Buffer(r.Auth)
}

func (r *AuthPacket) Decode(d *Decoder) error {
	r.Type = d.Int()
	r.Scheme = d.String()
	r.Auth = d.Buffer()
	return d.Err()
}

// SetWatches re-registers a reconnecting client's one-shot watches (101).
type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

func (r *SetWatches) Encode(e *Encoder) {
	e.Long(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
}

func (r *SetWatches) Decode(d *Decoder) error {
	r.RelativeZxid = d.Long()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
	return d.Err()
}

// SetWatches2 is SetWatches plus persistent watches (105).
type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

func (r *SetWatches2) Encode(e *Encoder) {
	e.Long(r.RelativeZxid)
	e.Strings(r.DataWatches)
	e.Strings(r.ExistWatches)
	e.Strings(r.ChildWatches)
	e.Strings(r.PersistentWatches)
	e.Strings(r.PersistentRecursiveWatches)
}

func (r *SetWatches2) Decode(d *Decoder) error {
	r.RelativeZxid = d.Long()
	r.DataWatches = d.Strings()
	r.ExistWatches = d.Strings()
	r.ChildWatches = d.Strings()
	r.PersistentWatches = d.Strings()
	r.PersistentRecursiveWatches = d.Strings()
	return d.Err()
}

// GetSASLRequest carries a client SASL token (102).
type GetSASLRequest struct {
	Token []byte
}

func (r *GetSASLRequest) Encode(e *Encoder) { e.Buffer(r.Token) }

func (r *GetSASLRequest) Decode(d *Decoder) error {
	r.Token = d.Buffer()
	return d.Err()
}

// SetSASLResponse carries the server's SASL challenge (reply to 102).
type SetSASLResponse struct {
	Token []byte
}

func (r *SetSASLResponse) Encode(e *Encoder) { e.Buffer(r.Token) }

func (r *SetSASLResponse) Decode(d *Decoder) error {
	r.Token = d.Buffer()
	return d.Err()
}

// WatcherEvent is the body of a notification (ReplyHeader xid -1).
type WatcherEvent struct {
	Type  int32
	State int32
	Path  string
}

func (r *WatcherEvent) Encode(e *Encoder) {
	e.Int(r.Type)
	e.Int(r.State)
	e.String(r.Path)
}

func (r *WatcherEvent) Decode(d *Decoder) error {
	r.Type = d.Int()
	r.State = d.Int()
	r.Path = d.String()
	return d.Err()
}

// ErrorResponse is the body of a failed multi sub-result and, with Err 0,
// the whole body of a successful addWatch reply.
type ErrorResponse struct {
	Err Code
}

func (r *ErrorResponse) Encode(e *Encoder) { e.Int(int32(r.Err)) }

func (r *ErrorResponse) Decode(d *Decoder) error {
	r.Err = Code(d.Int())
	return d.Err()
}

// ClientInfo is one identity in a whoAmI reply.
type ClientInfo struct {
	AuthScheme string
	User       string
}

// WhoAmIResponse lists the connection's authenticated identities (107).
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

func (r *WhoAmIResponse) Encode(e *Encoder) {
	e.Int(int32(len(r.ClientInfo)))
	for i := range r.ClientInfo {
		e.String(r.ClientInfo[i].AuthScheme)
		e.String(r.ClientInfo[i].User)
	}
}

func (r *WhoAmIResponse) Decode(d *Decoder) error {
	n := d.VectorLen(8)
	r.ClientInfo = nil
	if n > 0 {
		r.ClientInfo = make([]ClientInfo, 0, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			var c ClientInfo
			c.AuthScheme = d.String()
			c.User = d.String()
			r.ClientInfo = append(r.ClientInfo, c)
		}
	}
	return d.Err()
}

// MultiHeader precedes each sub-operation and sub-result of a multi and
// terminates the sequence with {-1, true, -1} (PROTOCOL §9).
type MultiHeader struct {
	Type Op
	Done bool
	Err  Code
}

// MultiHeaderSize is the encoded size of a MultiHeader.
const MultiHeaderSize = 9

func (h *MultiHeader) Encode(e *Encoder) {
	e.Int(int32(h.Type))
	e.Bool(h.Done)
	e.Int(int32(h.Err))
}

func (h *MultiHeader) Decode(d *Decoder) error {
	h.Type = Op(d.Int())
	h.Done = d.Bool()
	h.Err = Code(d.Int())
	return d.Err()
}
