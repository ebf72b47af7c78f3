package wire

// Request records of the tree operations (PROTOCOL §5, §6). Several
// ZooKeeper records share a layout; they share a Go type here through
// aliases, so the server handles them with one code path.

// CreateRequest is the body of create (1), create2 (15) and
// createContainer (19).
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
}

func (r *CreateRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	e.ACLs(r.ACL)
	e.Int(r.Flags)
}

func (r *CreateRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.ACL = d.ACLs()
	r.Flags = d.Int()
	return d.Err()
}

// CreateTTLRequest is the body of createTTL (21): a CreateRequest followed
// by the TTL in milliseconds. The embedding lets the server hand
// &r.CreateRequest to its create path.
type CreateTTLRequest struct {
	CreateRequest
	TTL int64
}

func (r *CreateTTLRequest) Encode(e *Encoder) {
	r.CreateRequest.Encode(e)
	e.Long(r.TTL)
}

func (r *CreateTTLRequest) Decode(d *Decoder) error {
	_ = r.CreateRequest.Decode(d)
	r.TTL = d.Long()
	return d.Err()
}

// DeleteRequest is the body of delete (2).
type DeleteRequest struct {
	Path    string
	Version int32
}

func (r *DeleteRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(r.Version)
}

func (r *DeleteRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Version = d.Int()
	return d.Err()
}

// PathWatchRequest is the body of exists (3), getData (4), getChildren (8)
// and getChildren2 (12).
type PathWatchRequest struct {
	Path  string
	Watch bool
}

type (
	ExistsRequest       = PathWatchRequest
	GetDataRequest      = PathWatchRequest
	GetChildrenRequest  = PathWatchRequest
	GetChildren2Request = PathWatchRequest
)

func (r *PathWatchRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Bool(r.Watch)
}

func (r *PathWatchRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Watch = d.Bool()
	return d.Err()
}

// SetDataRequest is the body of setData (5).
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

func (r *SetDataRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	e.Int(r.Version)
}

func (r *SetDataRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Data = d.Buffer()
	r.Version = d.Int()
	return d.Err()
}

// PathRequest is the body of getACL (6), sync (9), getAllChildrenNumber
// (104) and deleteContainer (20).
type PathRequest struct {
	Path string
}

type (
	GetACLRequest               = PathRequest
	SyncRequest                 = PathRequest
	GetAllChildrenNumberRequest = PathRequest
	DeleteContainerRequest      = PathRequest
)

func (r *PathRequest) Encode(e *Encoder) { e.String(r.Path) }

func (r *PathRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	return d.Err()
}

// SetACLRequest is the body of setACL (7); Version compares with aversion.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

func (r *SetACLRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.ACLs(r.ACL)
	e.Int(r.Version)
}

func (r *SetACLRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.ACL = d.ACLs()
	r.Version = d.Int()
	return d.Err()
}

// CheckVersionRequest is the body of check (13), mostly inside a multi.
type CheckVersionRequest struct {
	Path    string
	Version int32
}

func (r *CheckVersionRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(r.Version)
}

func (r *CheckVersionRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Version = d.Int()
	return d.Err()
}

// WatchesRequest is the body of checkWatches (17) and removeWatches (18);
// Type is a Watcher* constant.
type WatchesRequest struct {
	Path string
	Type int32
}

type (
	CheckWatchesRequest  = WatchesRequest
	RemoveWatchesRequest = WatchesRequest
)

func (r *WatchesRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(r.Type)
}

func (r *WatchesRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Type = d.Int()
	return d.Err()
}

// AddWatchRequest is the body of addWatch (106); Mode is an AddWatch*
// constant.
type AddWatchRequest struct {
	Path string
	Mode int32
}

func (r *AddWatchRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Int(r.Mode)
}

func (r *AddWatchRequest) Decode(d *Decoder) error {
	r.Path = d.String()
	r.Mode = d.Int()
	return d.Err()
}

// GetEphemeralsRequest is the body of getEphemerals (103).
type GetEphemeralsRequest struct {
	PrefixPath string
}

func (r *GetEphemeralsRequest) Encode(e *Encoder) { e.String(r.PrefixPath) }

func (r *GetEphemeralsRequest) Decode(d *Decoder) error {
	r.PrefixPath = d.String()
	return d.Err()
}

// ReconfigRequest is the body of reconfig (16).
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64
}

func (r *ReconfigRequest) Encode(e *Encoder) {
	e.String(r.JoiningServers)
	e.String(r.LeavingServers)
	e.String(r.NewMembers)
	e.Long(r.CurConfigID)
}

func (r *ReconfigRequest) Decode(d *Decoder) error {
	r.JoiningServers = d.String()
	r.LeavingServers = d.String()
	r.NewMembers = d.String()
	r.CurConfigID = d.Long()
	return d.Err()
}
