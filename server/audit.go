package server

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/corral-db/corral/wire"
)

// The audit log (audit.enable), in ZooKeeper 3.9's format: one line per
// event, as its Slf4jAuditLogger writes through the RFAAUDIT appender of
// its logback.xml ("%d{ISO8601} %p %c{2}: %m%n"):
//
//	2026-11-27 16:50:01,123 INFO o.a.z.a.Slf4jAuditLogger: session=0x1000\tuser=127.0.0.1,alice\tip=127.0.0.1\toperation=create\tznode=/a\tznode_type=persistent\tresult=success
//
// The fields are tab-separated key=value pairs in ZooKeeper's order
// (session, user, ip, operation, znode, znode_type, acl, result), absent
// ones left out; failures are logged at ERROR, the rest at INFO. What is
// logged follows ZooKeeper's AuditHelper and DataTree.killSession:
//   - every write a client of this server made (create, delete, setData,
//     setAcl, reconfig; a multi as its creates, deletes and setData, plus
//     one multiOperation failure if it failed), after it is applied;
//   - each ephemeral deleted by a closeSession, on every server that
//     applies it (ephemeralZNodeDeletionOnSessionCloseOrExpire), with the
//     server's user;
//   - serverStart when the server serves, serverStop (result invoked) when
//     it begins to stop.
//
// Events are formatted on the goroutine that applies writes (under the
// tree's lock) and handed to a writer goroutine through a bounded queue;
// when the queue is full the event is dropped and counted, and the count
// is logged, so a slow disk never stalls writes. The file rotates as
// ZooKeeper's appender does: at 10 MB, keeping 10 (file.1 ... file.10).

const (
	auditQueue     = 8192
	auditMaxSize   = 10 << 20
	auditMaxBackup = 10
	auditLogger    = "o.a.z.a.Slf4jAuditLogger"
)

// ZooKeeper's AuditConstants.
const (
	auditStart    = "serverStart"
	auditStop     = "serverStop"
	auditCreate   = "create"
	auditDelete   = "delete"
	auditSetData  = "setData"
	auditSetACL   = "setAcl"
	auditMulti    = "multiOperation"
	auditReconfig = "reconfig"
	auditEphemera = "ephemeralZNodeDeletionOnSessionCloseOrExpire"
)

type auditResult int

const (
	auditSuccess auditResult = iota
	auditFailure
	auditInvoked
)

func (r auditResult) String() string {
	return [...]string{"success", "failure", "invoked"}[r]
}

// auditEvent is one line's fields; "" fields are left out.
type auditEvent struct {
	session, user, ip, op, znode, znodeType, acl string
	result                                       auditResult
}

// format renders e as ZooKeeper's AuditEvent.toString.
func (e *auditEvent) format(b []byte) []byte {
	first := true
	add := func(k, v string) {
		if v == "" {
			return
		}
		if !first {
			b = append(b, '\t')
		}
		first = false
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	add("session", e.session)
	add("user", e.user)
	add("ip", e.ip)
	add("operation", e.op)
	add("znode", e.znode)
	add("znode_type", e.znodeType)
	add("acl", e.acl)
	if !first {
		b = append(b, '\t')
	}
	b = append(b, "result="...)
	return append(b, e.result.String()...)
}

// auditLog writes audit lines to its file. The queue is its only shared
// state; the file and its size belong to the writer goroutine (run).
type auditLog struct {
	path    string
	log     *slog.Logger
	user    string // the server's user (ZooKeeper's Login.SYSTEM_USER)
	now     func() time.Time
	queue   chan []byte
	dropped atomic.Int64
	done    chan struct{}
	closed  atomic.Bool

	// Writer goroutine only.
	f    *os.File
	size int64
}

// openAudit opens (appending) or creates the audit file; an audit log that
// cannot be written stops start-up.
func openAudit(path string, logger *slog.Logger) (*auditLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("audit.enable: opening the audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit.enable: %w", err)
	}
	name := "<NA>"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	a := &auditLog{path: path, log: logger, user: name, now: time.Now,
		queue: make(chan []byte, auditQueue), done: make(chan struct{}), f: f, size: st.Size()}
	return a, nil
}

// start launches the writer goroutine; Serve calls it and, when it ends,
// close.
func (a *auditLog) start() {
	if a == nil {
		return
	}
	a.log.Info("audit log enabled", "file", a.path)
	go a.run()
}

// add queues e; it never blocks.
func (a *auditLog) add(e *auditEvent) {
	if a == nil || a.closed.Load() {
		return
	}
	level := "INFO"
	if e.result == auditFailure {
		level = "ERROR"
	}
	b := make([]byte, 0, 256)
	b = a.now().AppendFormat(b, "2006-01-02 15:04:05,000")
	b = append(b, ' ')
	b = append(b, level...)
	b = append(b, " "+auditLogger+": "...)
	b = e.format(b)
	b = append(b, '\n')
	select {
	case a.queue <- b:
	default:
		a.dropped.Add(1)
	}
}

// close logs nothing more, waits for the queued lines to be written and
// closes the file.
func (a *auditLog) close() {
	if a == nil || a.closed.Swap(true) {
		return
	}
	close(a.queue)
	<-a.done
}

func (a *auditLog) run() {
	defer close(a.done)
	var reported int64
	for b := range a.queue {
		if a.f == nil {
			continue
		}
		if a.size+int64(len(b)) > auditMaxSize && a.size > 0 {
			a.rotate()
		}
		if a.f == nil {
			continue
		}
		n, err := a.f.Write(b)
		a.size += int64(n)
		if err != nil {
			a.log.Error("writing the audit log failed", "file", a.path, "err", err)
		}
		if d := a.dropped.Load(); d != reported {
			a.log.Warn("audit events dropped: the audit log could not keep up", "dropped_total", d)
			reported = d
		}
	}
	if a.f != nil {
		if err := a.f.Close(); err != nil {
			a.log.Error("closing the audit log failed", "file", a.path, "err", err)
		}
	}
}

// rotate renames file.N to file.N+1 (dropping the last), file to file.1,
// and starts a new file.
func (a *auditLog) rotate() {
	if err := a.f.Close(); err != nil {
		a.log.Error("closing the audit log failed", "file", a.path, "err", err)
	}
	a.f = nil
	os.Remove(a.path + "." + strconv.Itoa(auditMaxBackup))
	for i := auditMaxBackup - 1; i >= 1; i-- {
		os.Rename(a.path+"."+strconv.Itoa(i), a.path+"."+strconv.Itoa(i+1))
	}
	if err := os.Rename(a.path, a.path+".1"); err != nil {
		a.log.Error("rotating the audit log failed", "file", a.path, "err", err)
	}
	f, err := os.OpenFile(a.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		a.log.Error("reopening the audit log failed; audit events are lost", "file", a.path, "err", err)
		return
	}
	a.f, a.size = f, 0
}

// serverEvent logs serverStart or serverStop.
func (a *auditLog) serverEvent(op string, r auditResult) {
	if a == nil {
		return
	}
	a.add(&auditEvent{user: a.user, op: op, result: r})
}

func sessionHex(id int64) string { return "0x" + strconv.FormatUint(uint64(id), 16) }

// auditUsers is AuthUtil.getUsers: the user name of each of the session's
// ids that has one (the address for ip, the name for digest), joined by
// commas, in the order ZooKeeper iterates the connection's ids (a
// ConcurrentHashMap set: see javaSetOrder).
func auditUsers(ids []wire.Id) string {
	var names []string
	for _, id := range javaSetOrder(ids) {
		var n string
		switch id.Scheme {
		case "ip", "x509", "sasl", "key":
			n = id.ID
		case "digest":
			n, _, _ = strings.Cut(id.ID, ":")
		}
		if strings.TrimSpace(n) != "" {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// javaSetOrder orders ids as a Java ConcurrentHashMap-backed set of Id
// iterates them when they were added in the order given: by bucket
// (the spread hash of Id.hashCode modulo the table size, 16 doubling at
// three quarters full), then in insertion order within a bucket.
func javaSetOrder(ids []wire.Id) []wire.Id {
	n := 16
	for len(ids) > n*3/4 {
		n *= 2
	}
	bucket := func(id wire.Id) int {
		h := 17
		h = int(int32(37*h + int(javaHash(id.Scheme))))
		h = int(int32(37*h + int(javaHash(id.ID))))
		u := uint32(h)
		return int((u^u>>16)&0x7fffffff) & (n - 1)
	}
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b wire.Id) int { return bucket(a) - bucket(b) })
	return out
}

// javaHash is String.hashCode.
func javaHash(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

// auditACL is ZKUtil.aclToString (entries concatenated without a
// separator, as ZooKeeper writes them).
func auditACL(acl []wire.ACL) string {
	var b strings.Builder
	for _, a := range acl {
		b.WriteString(a.ID.Scheme)
		b.WriteByte(':')
		b.WriteString(a.ID.ID)
		b.WriteByte(':')
		for _, p := range []struct {
			bit int32
			c   byte
		}{{wire.PermCreate, 'c'}, {wire.PermDelete, 'd'}, {wire.PermRead, 'r'}, {wire.PermWrite, 'w'}, {wire.PermAdmin, 'a'}} {
			if a.Perms&p.bit != 0 {
				b.WriteByte(p.c)
			}
		}
	}
	return b.String()
}

// createMode is CreateMode.toString().toLowerCase().
func createMode(flags int32) string {
	switch flags {
	case wire.ModePersistent:
		return "persistent"
	case wire.ModeEphemeral:
		return "ephemeral"
	case wire.ModePersistentSequential:
		return "persistent_sequential"
	case wire.ModeEphemeralSequential:
		return "ephemeral_sequential"
	case wire.ModeContainer:
		return "container"
	case wire.ModePersistentWithTTL:
		return "persistent_with_ttl"
	case wire.ModePersistentSequentialWithTTL:
		return "persistent_sequential_with_ttl"
	}
	return ""
}

func createFlags(rec wire.Record) (string, int32, bool) {
	switch c := rec.(type) {
	case *wire.CreateRequest:
		return c.Path, c.Flags, true
	case *wire.CreateTTLRequest:
		return c.Path, c.Flags, true
	}
	return "", 0, false
}

// auditWrite logs a client's write once applied (AuditHelper.addAuditLog);
// replyWrite calls it.
func (s *Server) auditWrite(r *request) {
	a := s.audit
	if a == nil || r.c == nil {
		return
	}
	failed := r.hdr.Type == wire.OpError // refused before it became a txn
	ev := auditEvent{session: sessionHex(r.sid), user: auditUsers(r.auth), ip: hostOf(r.c.remote)}
	ev.znode = r.res.Path
	switch r.op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer:
		// ZooKeeper 3.9 does not audit createTTL (AuditHelper's switch
		// leaves it out); neither do we.
		ev.op = auditCreate
		if p, flags, ok := createFlags(r.rec); ok {
			ev.znodeType = createMode(flags)
			if failed {
				ev.znode = p
			}
		}
	case wire.OpDelete, wire.OpDeleteContainer:
		ev.op = auditDelete
		if d, ok := r.rec.(*wire.DeleteRequest); ok && failed {
			ev.znode = d.Path
		}
	case wire.OpSetData:
		ev.op = auditSetData
		if d, ok := r.rec.(*wire.SetDataRequest); ok && failed {
			ev.znode = d.Path
		}
	case wire.OpSetACL:
		ev.op = auditSetACL
		if d, ok := r.rec.(*wire.SetACLRequest); ok {
			ev.acl = auditACL(d.ACL)
			if failed {
				ev.znode = d.Path
			}
		}
	case wire.OpMulti:
		if !failed {
			s.auditMulti(r, ev)
			return
		}
		ev.op = auditMulti
	case wire.OpReconfig:
		ev.op = auditReconfig
	default:
		return
	}
	if failed || r.res.Err != wire.CodeOK {
		ev.result = auditFailure
	}
	a.add(&ev)
}

// auditMulti logs a multi's creates, deletes and setData, and one
// multiOperation failure if it failed (AuditHelper.logMultiOperation).
func (s *Server) auditMulti(r *request, base auditEvent) {
	modes := map[string]string{}
	if m, ok := r.rec.(*wire.MultiRequest); ok {
		for _, op := range m.Ops {
			switch op.Type {
			case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer:
				modes[op.Create.Path] = createMode(op.Create.Flags)
			}
		}
	}
	failed := false
	for _, res := range r.res.Multi {
		ev := base
		ev.znode = res.Path
		switch res.Type {
		case wire.OpCreate, wire.OpCreate2, wire.OpCreateTTL, wire.OpCreateContainer:
			ev.op, ev.znodeType = auditCreate, modes[res.Path]
		case wire.OpDelete, wire.OpDeleteContainer:
			ev.op = auditDelete
		case wire.OpSetData:
			ev.op = auditSetData
		case wire.OpError:
			failed = true
			continue
		default:
			continue
		}
		s.audit.add(&ev)
	}
	if failed {
		ev := base
		ev.znode = ""
		ev.op, ev.result = auditMulti, auditFailure
		s.audit.add(&ev)
	}
}

// auditCloseSession logs the ephemerals a closeSession deleted, and those
// it named that were already gone (DataTree.killSession); afterApply calls
// it with the applied request.
func (s *Server) auditCloseSession(r *request) {
	a := s.audit
	if a == nil || r.hdr.Type != wire.OpCloseSession {
		return
	}
	sess := sessionHex(r.hdr.SessionID)
	deleted := make(map[string]bool)
	var extra []string
	named := make(map[string]bool, len(r.tx.Paths))
	for _, p := range r.tx.Paths {
		named[p] = true
	}
	for _, ev := range r.res.Events {
		if ev.Type == wire.EventNodeDeleted {
			deleted[ev.Path] = true
			if !named[ev.Path] {
				extra = append(extra, ev.Path)
			}
		}
	}
	// The txn's paths first, then any others, as ZooKeeper does. (Its
	// txn lists them in its leader's HashSet order, ours sorted.)
	for _, list := range [][]string{r.tx.Paths, extra} {
		for _, p := range list {
			ev := auditEvent{session: sess, user: a.user, op: auditEphemera, znode: p}
			if !deleted[p] {
				ev.result = auditFailure
			}
			a.add(&ev)
		}
	}
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
