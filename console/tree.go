package console

import (
	"encoding/base64"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// Paging of children. ZooKeeper's getChildren returns every child in one
// reply, so the console fetches the list once per page request, sorts it
// and hands the page only PageSize names at a time (with each one's Stat,
// fetched pipelined): a node with 100,000 children costs the browser 500
// rows, not 100,000.
const (
	DefaultPageSize = 500
	MaxPageSize     = 2000
)

// statJSON is a Stat as the page shows it: zxids and the owner in hex as
// zkCli prints them, times in milliseconds since the epoch.
type statJSON struct {
	Czxid          string `json:"czxid"`
	Mzxid          string `json:"mzxid"`
	Pzxid          string `json:"pzxid"`
	Ctime          int64  `json:"ctime"`
	Mtime          int64  `json:"mtime"`
	Version        int32  `json:"version"`
	Cversion       int32  `json:"cversion"`
	Aversion       int32  `json:"aversion"`
	EphemeralOwner string `json:"ephemeralOwner"`
	DataLength     int32  `json:"dataLength"`
	NumChildren    int32  `json:"numChildren"`
}

func hex64(v int64) string { return "0x" + strconv.FormatUint(uint64(v), 16) }

func toStatJSON(s client.Stat) *statJSON {
	return &statJSON{
		Czxid: hex64(s.Czxid), Mzxid: hex64(s.Mzxid), Pzxid: hex64(s.Pzxid),
		Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion,
		EphemeralOwner: hex64(s.EphemeralOwner),
		DataLength:     s.DataLength, NumChildren: s.NumChildren,
	}
}

type aclJSON struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"` // "cdrwa" letters, as zkCli prints them
}

// permLetters are zkCli's letters in its order.
var permLetters = []struct {
	bit    int32
	letter byte
}{{wire.PermCreate, 'c'}, {wire.PermDelete, 'd'}, {wire.PermRead, 'r'}, {wire.PermWrite, 'w'}, {wire.PermAdmin, 'a'}}

func permString(p int32) string {
	var b []byte
	for _, l := range permLetters {
		if p&l.bit != 0 {
			b = append(b, l.letter)
		}
	}
	return string(b)
}

func parsePerms(s string) (int32, error) {
	var p int32
	for i := 0; i < len(s); i++ {
		found := false
		for _, l := range permLetters {
			if s[i] == l.letter {
				p |= l.bit
				found = true
			}
		}
		if !found {
			return 0, badRequest("permission letters are c, d, r, w, a; got " + strconv.Quote(s))
		}
	}
	if p == 0 {
		return 0, badRequest("an ACL entry needs at least one permission")
	}
	return p, nil
}

func checkPath(p string) (string, error) {
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") || (len(p) > 1 && strings.HasSuffix(p, "/")) || strings.Contains(p, "//") || strings.ContainsRune(p, 0) {
		return "", badRequest("invalid path " + strconv.Quote(p))
	}
	return p, nil
}

func childPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// ---- children ----

type childJSON struct {
	Name        string `json:"name"`
	NumChildren int32  `json:"numChildren"`
	DataLength  int32  `json:"dataLength"`
	Ephemeral   bool   `json:"ephemeral"`
	Gone        bool   `json:"gone,omitempty"`    // deleted between list and stat
	Refused     bool   `json:"refused,omitempty"` // its ACL refuses READ: no Stat
}

type childrenJSON struct {
	Path string `json:"path"`
	// Total is the number of children (matching Prefix, if given).
	Total    int         `json:"total"`
	Children []childJSON `json:"children"`
	// Next is the name to pass as after= for the next page; "" at the end.
	Next string `json:"next"`
}

// handleChildren: GET api/children?path=P&after=NAME&limit=N&prefix=S
// lists P's children in name order, starting after NAME.
func (c *Console) handleChildren(cl *call) (any, error) {
	q := cl.r.URL.Query()
	path, err := checkPath(q.Get("path"))
	if err != nil {
		return nil, err
	}
	limit := DefaultPageSize
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, badRequest("limit must be a positive integer")
		}
		limit = min(n, MaxPageSize)
	}
	conn, err := c.conn(cl)
	if err != nil {
		return nil, err
	}
	// Reads are local to the member the session is on; a sync first
	// makes the listing at least as new as every write completed before
	// it (the reads queue behind it, in order), so the page never shows
	// a follower's lag. Consoles read rarely; the round trip is cheap.
	fs := conn.SyncAsync(path)
	names, err := conn.Children(cl.ctx, path)
	if err != nil {
		return nil, err
	}
	if _, err := fs.Wait(cl.ctx); err != nil {
		return nil, err
	}
	page, total, next := pageNames(names, q.Get("prefix"), q.Get("after"), limit)
	out := childrenJSON{Path: path, Total: total, Children: make([]childJSON, len(page)), Next: next}
	futs := make([]*client.Future[*client.Stat], len(page))
	for i, name := range page {
		futs[i] = conn.ExistsAsync(childPath(path, name))
	}
	for i, f := range futs {
		st, err := f.Wait(cl.ctx)
		out.Children[i] = childJSON{Name: page[i]}
		if errors.Is(err, wire.CodeNoAuth) {
			// Listed by the parent, but the child's ACL hides its Stat.
			out.Children[i].Refused = true
			continue
		}
		if err != nil {
			return nil, err
		}
		if st == nil {
			out.Children[i].Gone = true
			continue
		}
		out.Children[i].NumChildren = st.NumChildren
		out.Children[i].DataLength = st.DataLength
		out.Children[i].Ephemeral = st.EphemeralOwner != 0
	}
	return out, nil
}

// pageNames sorts names in place, keeps those with prefix, and returns up
// to limit of them after the name after, the number kept, and the cursor
// for the next page ("" when this page is the last).
func pageNames(names []string, prefix, after string, limit int) (page []string, total int, next string) {
	if prefix != "" {
		kept := names[:0]
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	sort.Strings(names)
	i := 0
	if after != "" {
		i = sort.SearchStrings(names, after)
		if i < len(names) && names[i] == after {
			i++
		}
	}
	end := min(i+limit, len(names))
	page = names[i:end]
	if end < len(names) && len(page) > 0 {
		next = page[len(page)-1]
	}
	return page, len(names), next
}

// ---- node ----

type nodeJSON struct {
	Path string `json:"path"`
	// Stat is null with StatError when the ACL refuses reading (ZooKeeper
	// 3.9 guards exists with READ).
	Stat      *statJSON `json:"stat"`
	StatError *apiError `json:"statError,omitempty"`
	// Data is base64; null with DataError when the ACL refuses reading.
	Data      *string   `json:"data"`
	DataError *apiError `json:"dataError,omitempty"`
	ACL       []aclJSON `json:"acl"`
	ACLError  *apiError `json:"aclError,omitempty"`
	Ephemeral bool      `json:"ephemeral"`
	Owner     string    `json:"ephemeralOwner,omitempty"`
	Mode      string    `json:"mode"` // persistent, ephemeral, container, ttl
	Writable  bool      `json:"writable"`
}

// handleNode: GET api/node?path=P. Stat, data and ACL are read with the
// user's session, so the server's ACL checks decide what comes back; a
// refused part is reported beside the others (getACL needs READ or
// ADMIN, so an admin may see the ACL of a node it cannot read).
func (c *Console) handleNode(cl *call) (any, error) {
	path, err := checkPath(cl.r.URL.Query().Get("path"))
	if err != nil {
		return nil, err
	}
	conn, err := c.conn(cl)
	if err != nil {
		return nil, err
	}
	// Pipelined behind a sync (see handleChildren): one round trip.
	fs := conn.SyncAsync(path)
	fe := conn.ExistsAsync(path)
	fg := conn.GetAsync(path)
	fa := conn.GetACLAsync(path)
	if _, err := fs.Wait(cl.ctx); err != nil {
		return nil, err
	}
	st, err := fe.Wait(cl.ctx)
	if errors.Is(err, wire.CodeNoAuth) {
		// ZooKeeper 3.9 checks READ on exists too: without it the node
		// shows only that it exists and that reading it is refused.
		out := &nodeJSON{Path: path, Writable: c.cfg.Writable, Mode: "unknown"}
		out.StatError = toAPIError(err)
		out.DataError = out.StatError
		if _, err := fa.Wait(cl.ctx); err != nil {
			out.ACLError = toAPIError(err)
		}
		_, _ = fg.Wait(cl.ctx)
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, wire.CodeNoNode
	}
	out := &nodeJSON{Path: path, Stat: toStatJSON(*st), Writable: c.cfg.Writable, Mode: nodeMode(*st)}
	if st.EphemeralOwner != 0 && out.Mode == "ephemeral" {
		out.Ephemeral = true
		out.Owner = hex64(st.EphemeralOwner)
	}
	if g, err := fg.Wait(cl.ctx); err != nil {
		if isRefusal(err) {
			out.DataError = toAPIError(err)
		} else {
			return nil, err
		}
	} else {
		s := base64.StdEncoding.EncodeToString(g.Data)
		out.Data = &s
		out.Stat = toStatJSON(g.Stat) // the newer of the two
	}
	if a, err := fa.Wait(cl.ctx); err != nil {
		if isRefusal(err) {
			out.ACLError = toAPIError(err)
		} else {
			return nil, err
		}
	} else {
		out.ACL = make([]aclJSON, 0, len(a.ACL))
		for _, e := range a.ACL {
			out.ACL = append(out.ACL, aclJSON{Scheme: e.ID.Scheme, ID: e.ID.ID, Perms: permString(e.Perms)})
		}
	}
	return out, nil
}

// isRefusal: the server answered, refusing this one read (the node may
// also have gone between the calls).
func isRefusal(err error) bool {
	return errors.Is(err, wire.CodeNoAuth) || errors.Is(err, wire.CodeNoNode)
}

// nodeMode names the node's kind from its ephemeralOwner, which ZooKeeper
// overloads: containers and TTL nodes carry marker values there.
func nodeMode(s client.Stat) string {
	switch {
	case s.EphemeralOwner == 0:
		return "persistent"
	case uint64(s.EphemeralOwner) == 0x8000000000000000:
		return "container"
	case uint64(s.EphemeralOwner)>>56 == 0xff:
		return "ttl"
	}
	return "ephemeral"
}

// ---- writes ----

type createReq struct {
	Path string    `json:"path"`
	Data string    `json:"data"` // base64
	Mode string    `json:"mode"` // persistent (default), sequential, container
	ACL  []aclJSON `json:"acl"`  // empty: world:anyone cdrwa
}

type setReq struct {
	Path    string `json:"path"`
	Data    string `json:"data"`
	Version *int32 `json:"version"` // absent: any version (-1)
}

type deleteReq struct {
	Path    string `json:"path"`
	Version *int32 `json:"version"`
}

func decodeData(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, badRequest("data is not base64")
	}
	return b, nil
}

func version(v *int32) int32 {
	if v == nil {
		return -1
	}
	return *v
}

func toACL(in []aclJSON) ([]client.ACL, error) {
	if len(in) == 0 {
		return client.WorldACL(client.PermAll), nil
	}
	out := make([]client.ACL, 0, len(in))
	for _, a := range in {
		p, err := parsePerms(a.Perms)
		if err != nil {
			return nil, err
		}
		if a.Scheme == "" {
			return nil, badRequest("an ACL entry needs a scheme")
		}
		out = append(out, client.ACL{Perms: p, ID: client.ID{Scheme: a.Scheme, ID: a.ID}})
	}
	return out, nil
}

// handleCreate: POST api/create. Ephemeral modes are not offered: the
// node would die with the console's session, not the user's.
func (c *Console) handleCreate(cl *call) (any, error) {
	var req createReq
	if err := decodeBody(cl.r, &req); err != nil {
		return nil, err
	}
	path, err := checkPath(req.Path)
	if err != nil {
		return nil, err
	}
	if path == "/" {
		return nil, badRequest("the root exists")
	}
	data, err := decodeData(req.Data)
	if err != nil {
		return nil, err
	}
	acl, err := toACL(req.ACL)
	if err != nil {
		return nil, err
	}
	switch req.Mode {
	case "", "persistent", "sequential", "container":
	default:
		return nil, badRequest("mode must be persistent, sequential or container")
	}
	conn, err := c.conn(cl)
	if err != nil {
		return nil, err
	}
	var created string
	var st client.Stat
	switch req.Mode {
	case "sequential":
		created, st, err = conn.Create2(cl.ctx, path, data, acl, client.ModePersistentSequential)
	case "container":
		created, st, err = conn.CreateContainer(cl.ctx, path, data, acl)
	default:
		created, st, err = conn.Create2(cl.ctx, path, data, acl, client.ModePersistent)
	}
	if err != nil {
		return nil, err
	}
	c.cfg.Logger.Info("console: create", "path", created, "user", cl.creds.user)
	return map[string]any{"path": created, "stat": toStatJSON(st)}, nil
}

// handleSet: POST api/set.
func (c *Console) handleSet(cl *call) (any, error) {
	var req setReq
	if err := decodeBody(cl.r, &req); err != nil {
		return nil, err
	}
	path, err := checkPath(req.Path)
	if err != nil {
		return nil, err
	}
	data, err := decodeData(req.Data)
	if err != nil {
		return nil, err
	}
	conn, err := c.conn(cl)
	if err != nil {
		return nil, err
	}
	st, err := conn.Set(cl.ctx, path, data, version(req.Version))
	if err != nil {
		return nil, err
	}
	c.cfg.Logger.Info("console: set", "path", path, "user", cl.creds.user)
	return map[string]any{"path": path, "stat": toStatJSON(st)}, nil
}

// handleDelete: POST api/delete. One node; ZooKeeper refuses a node with
// children (NOTEMPTY) and so does the console.
func (c *Console) handleDelete(cl *call) (any, error) {
	var req deleteReq
	if err := decodeBody(cl.r, &req); err != nil {
		return nil, err
	}
	path, err := checkPath(req.Path)
	if err != nil {
		return nil, err
	}
	if path == "/" {
		return nil, badRequest("the root cannot be deleted")
	}
	conn, err := c.conn(cl)
	if err != nil {
		return nil, err
	}
	if err := conn.Delete(cl.ctx, path, version(req.Version)); err != nil {
		return nil, err
	}
	c.cfg.Logger.Info("console: delete", "path", path, "user", cl.creds.user)
	return map[string]any{"path": path}, nil
}

// ---- identity ----

func (c *Console) handleInfo(cl *call) (any, error) {
	return map[string]any{
		"writable":   c.cfg.Writable,
		"servers":    c.cfg.Servers,
		"ids":        c.cfg.IDs,
		"durability": c.cfg.Durability,
		"pageSize":   DefaultPageSize,
		"interval":   c.cfg.SampleInterval.Milliseconds(),
		"window":     c.cfg.Window.Milliseconds(),
	}, nil
}

// handleWhoAmI: the identities the server gave the user's session.
func (c *Console) handleWhoAmI(cl *call) (any, error) {
	conn, err := c.conn(cl)
	if err != nil {
		return nil, err
	}
	ids, err := conn.WhoAmI(cl.ctx)
	if err != nil {
		return nil, err
	}
	out := make([]aclJSON, 0, len(ids))
	for _, id := range ids {
		out = append(out, aclJSON{Scheme: id.AuthScheme, ID: id.User})
	}
	return map[string]any{"user": cl.creds.user, "identities": out}, nil
}
