package wire

// Response records (PROTOCOL §5, §6). They follow a ReplyHeader whose Err
// is CodeOK; an error reply has no body.

// CreateResponse answers create (1).
type CreateResponse struct {
	Path string
}

func (r *CreateResponse) Encode(e *Encoder) { e.String(r.Path) }

func (r *CreateResponse) Decode(d *Decoder) error {
	r.Path = d.String()
	return d.Err()
}

// Create2Response answers create2 (15), createContainer (19) and
// createTTL (21).
type Create2Response struct {
	Path string
	Stat Stat
}

func (r *Create2Response) Encode(e *Encoder) {
	e.String(r.Path)
	e.Stat(&r.Stat)
}

func (r *Create2Response) Decode(d *Decoder) error {
	r.Path = d.String()
	d.Stat(&r.Stat)
	return d.Err()
}

// StatResponse answers exists (3), setData (5), setACL (7) and a
// standalone check (13).
type StatResponse struct {
	Stat Stat
}

type (
	ExistsResponse  = StatResponse
	SetDataResponse = StatResponse
	SetACLResponse  = StatResponse
)

func (r *StatResponse) Encode(e *Encoder) { e.Stat(&r.Stat) }

func (r *StatResponse) Decode(d *Decoder) error {
	d.Stat(&r.Stat)
	return d.Err()
}

// GetDataResponse answers getData (4) and reconfig (16). A nil Data is
// sent as a null buffer, which clients accept like an empty one.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

func (r *GetDataResponse) Encode(e *Encoder) {
	e.Buffer(r.Data)
	e.Stat(&r.Stat)
}

func (r *GetDataResponse) Decode(d *Decoder) error {
	r.Data = d.Buffer()
	d.Stat(&r.Stat)
	return d.Err()
}

// GetChildrenResponse answers getChildren (8): names, not paths.
type GetChildrenResponse struct {
	Children []string
}

func (r *GetChildrenResponse) Encode(e *Encoder) { e.Strings(r.Children) }

func (r *GetChildrenResponse) Decode(d *Decoder) error {
	r.Children = d.Strings()
	return d.Err()
}

// GetChildren2Response answers getChildren2 (12).
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

func (r *GetChildren2Response) Encode(e *Encoder) {
	e.Strings(r.Children)
	e.Stat(&r.Stat)
}

func (r *GetChildren2Response) Decode(d *Decoder) error {
	r.Children = d.Strings()
	d.Stat(&r.Stat)
	return d.Err()
}

// GetACLResponse answers getACL (6).
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

func (r *GetACLResponse) Encode(e *Encoder) {
	e.ACLs(r.ACL)
	e.Stat(&r.Stat)
}

func (r *GetACLResponse) Decode(d *Decoder) error {
	r.ACL = d.ACLs()
	d.Stat(&r.Stat)
	return d.Err()
}

// SyncResponse answers sync (9) by echoing the path.
type SyncResponse struct {
	Path string
}

func (r *SyncResponse) Encode(e *Encoder) { e.String(r.Path) }

func (r *SyncResponse) Decode(d *Decoder) error {
	r.Path = d.String()
	return d.Err()
}

// GetAllChildrenNumberResponse answers getAllChildrenNumber (104).
type GetAllChildrenNumberResponse struct {
	TotalNumber int32
}

func (r *GetAllChildrenNumberResponse) Encode(e *Encoder) { e.Int(r.TotalNumber) }

func (r *GetAllChildrenNumberResponse) Decode(d *Decoder) error {
	r.TotalNumber = d.Int()
	return d.Err()
}

// GetEphemeralsResponse answers getEphemerals (103) with full paths.
type GetEphemeralsResponse struct {
	Ephemerals []string
}

func (r *GetEphemeralsResponse) Encode(e *Encoder) { e.Strings(r.Ephemerals) }

func (r *GetEphemeralsResponse) Decode(d *Decoder) error {
	r.Ephemerals = d.Strings()
	return d.Err()
}
