package wire

// Id is an authentication identity: a scheme and an id within it.
type Id struct {
	Scheme string
	ID     string
}

// ACL grants Perms to the identities matched by ID.
type ACL struct {
	Perms int32
	ID    Id
}

// Permission bits (ZooDefs.Perms).
const (
	PermRead   int32 = 1
	PermWrite  int32 = 2
	PermCreate int32 = 4
	PermDelete int32 = 8
	PermAdmin  int32 = 16
	PermAll    int32 = 31
)

var (
	AnyoneID = Id{Scheme: "world", ID: "anyone"}
	AuthIDs  = Id{Scheme: "auth", ID: ""}
	// OpenACLUnsafe is ZooDefs.Ids.OPEN_ACL_UNSAFE.
	OpenACLUnsafe = []ACL{{Perms: PermAll, ID: AnyoneID}}
	// ReadACLUnsafe is ZooDefs.Ids.READ_ACL_UNSAFE.
	ReadACLUnsafe = []ACL{{Perms: PermRead, ID: AnyoneID}}
	// CreatorAllACL is ZooDefs.Ids.CREATOR_ALL_ACL.
	CreatorAllACL = []ACL{{Perms: PermAll, ID: AuthIDs}}
)

// Stat is the znode metadata returned to clients (68 bytes on the wire).
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// StatSize is the encoded size of a Stat.
const StatSize = 68

func (e *Encoder) Stat(s *Stat) {
	e.Long(s.Czxid)
	e.Long(s.Mzxid)
	e.Long(s.Ctime)
	e.Long(s.Mtime)
	e.Int(s.Version)
	e.Int(s.Cversion)
	e.Int(s.Aversion)
	e.Long(s.EphemeralOwner)
	e.Int(s.DataLength)
	e.Int(s.NumChildren)
	e.Long(s.Pzxid)
}

func (d *Decoder) Stat(s *Stat) {
	s.Czxid = d.Long()
	s.Mzxid = d.Long()
	s.Ctime = d.Long()
	s.Mtime = d.Long()
	s.Version = d.Int()
	s.Cversion = d.Int()
	s.Aversion = d.Int()
	s.EphemeralOwner = d.Long()
	s.DataLength = d.Int()
	s.NumChildren = d.Int()
	s.Pzxid = d.Long()
}

func (e *Encoder) ACLs(acls []ACL) {
	e.Int(int32(len(acls)))
	for i := range acls {
		e.Int(acls[i].Perms)
		e.String(acls[i].ID.Scheme)
		e.String(acls[i].ID.ID)
	}
}

// ACLs reads a vector<ACL>; null reads as nil.
func (d *Decoder) ACLs() []ACL {
	n := d.VectorLen(12)
	if n == 0 {
		return nil
	}
	out := make([]ACL, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		var a ACL
		a.Perms = d.Int()
		a.ID.Scheme = d.internedString()
		a.ID.ID = d.internedString()
		out = append(out, a)
	}
	return out
}
