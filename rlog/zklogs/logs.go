package zklogs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/wire"
)

// DefaultMaxAppend is the largest append accepted by default: under the
// server's default 1 MiB request limit (jute.maxbuffer) with room for the
// multi around the payload.
const DefaultMaxAppend = 1<<20 - 16<<10

// maxCASRetries bounds how often an operation retries after another
// writer changed the log's control record between its read and its write.
const maxCASRetries = 1000

// maxKnown bounds the logs whose control record a Logs remembers (a
// pipe per log it appended to); at the bound the idle ones are dropped.
const maxKnown = 4096

// maxResyncs bounds how often an append syncs its member and retries
// after a multi refused for a stale record (see append).
const maxResyncs = 3

// deleteBatch bounds the deletes in flight at once when trim or delete
// removes entries.
const deleteBatch = 256

// Options configure Logs.
type Options struct {
	// Servers are the ZooKeeper client addresses to connect to (the local
	// member's first: a member serves its own API).
	Servers []string
	// Root is rlog.root, the znode whose children are the logs.
	Root string
	// MaxAppend bounds one append (DefaultMaxAppend if 0).
	MaxAppend int64
	// SessionTimeout of the ZooKeeper session (10 s if 0).
	SessionTimeout time.Duration
	Logger         *slog.Logger
	// Dial, if set, makes the session's connections instead of TCP (a
	// member's own API dials it in process: server.Server.DialLocal).
	Dial client.DialFunc
}

// Logs is the logs under a root, run through one ZooKeeper session. It
// implements rlogsvc.Backend.
type Logs struct {
	opts Options
	root string

	// mu guards conn; a Conn whose session is gone is replaced on the next
	// call.
	mu   sync.Mutex
	conn *client.Conn

	// knownMu guards known: per log, the pipe of its appends (pipeline.go)
	// with the control record as this server last read or wrote it. An
	// append sends its multi against it without reading first, so
	// appends pay one round trip each and pipeline; a record gone stale
	// fails the multi's version check (BadVersion, nothing applied) and
	// costs a fresh read.
	knownMu sync.Mutex
	known   map[string]*pipe
}

// New returns Logs on opts; it connects on first use.
func New(opts Options) (*Logs, error) {
	if len(opts.Servers) == 0 {
		return nil, errors.New("zklogs: no servers")
	}
	root := strings.TrimSuffix(opts.Root, "/")
	if root == "" || !strings.HasPrefix(root, "/") {
		return nil, fmt.Errorf("zklogs: root %q: want an absolute znode path", opts.Root)
	}
	if opts.MaxAppend <= 0 {
		opts.MaxAppend = DefaultMaxAppend
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Logs{opts: opts, root: root}, nil
}

// Close ends the session.
func (l *Logs) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close()
	l.conn = nil
	return err
}

// zk returns a live connection, connecting if there is none.
func (l *Logs) zk(ctx context.Context) (*client.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.conn; c != nil {
		switch c.State() {
		case client.StateExpired, client.StateClosed, client.StateAuthFailed:
			c.Close()
			l.conn = nil
		default:
			return c, nil
		}
	}
	// Connect waits for a session; a member that does not answer within
	// a session timeout sends the caller elsewhere.
	cctx, cancel := context.WithTimeout(ctx, l.opts.SessionTimeout)
	defer cancel()
	copts := []client.Option{client.SessionTimeout(l.opts.SessionTimeout),
		client.Logger(l.opts.Logger), client.MaxBufferSize(int(l.opts.MaxAppend) + 1<<20)}
	if l.opts.Dial != nil {
		copts = append(copts, client.Dialer(l.opts.Dial))
	}
	c, err := client.Connect(cctx, l.opts.Servers, copts...)
	if err != nil {
		// Nothing was sent: another server may take the request.
		return nil, fmt.Errorf("%w: zklogs: connect to %v: %w", rlog.ErrUnavailable, l.opts.Servers, err)
	}
	l.conn = c
	return c, nil
}

func (l *Logs) logPath(name string) string { return l.root + "/" + name }

func (l *Logs) entryPath(name string, off int64) string {
	return l.root + "/" + name + "/" + rlog.EntryName(off)
}

// checkName refuses a name that cannot name a log.
func checkName(name string) *rlog.Error {
	if rlog.ValidName(name) {
		return nil
	}
	e := fail(rlog.CodeBadRequest, name, rlog.Control{}, -1)
	e.Detail = "a log's name is 1 to 255 letters, digits, '.', '_' or '-'"
	return e
}

// fail is an operation's own failure with the log's positions.
func fail(code rlog.Code, name string, c rlog.Control, off int64) *rlog.Error {
	return &rlog.Error{Code: code, Log: name, Start: c.Start, End: c.End, Committed: c.End, Sealed: c.Sealed, Offset: off}
}

// get reads a log's control record and its version; a missing log is a
// NotFound *rlog.Error, damaged data a BadRequest one.
func (l *Logs) get(ctx context.Context, zk *client.Conn, name string, watch bool) (rlog.Control, int32, <-chan client.Event, error) {
	var (
		data []byte
		st   client.Stat
		ch   <-chan client.Event
		err  error
	)
	if watch {
		data, st, ch, err = zk.GetW(ctx, l.logPath(name))
	} else {
		data, st, err = zk.Get(ctx, l.logPath(name))
	}
	if errors.Is(err, wire.CodeNoNode) {
		l.forget(name)
		return rlog.Control{}, 0, nil, fail(rlog.CodeNotFound, name, rlog.Control{}, -1)
	}
	if err != nil {
		return rlog.Control{}, 0, nil, err
	}
	c, perr := rlog.ParseControl(data)
	if perr != nil {
		l.forget(name)
		e := fail(rlog.CodeBadRequest, name, rlog.Control{}, -1)
		e.Detail = perr.Error()
		return rlog.Control{}, 0, nil, e
	}
	return c, st.Version, ch, nil
}

// result splits an error into the operation's own failure (Result.Err)
// and anything else (the outcome unknown).
func result(off int64, err error) (rlog.Result, error) {
	var e *rlog.Error
	if errors.As(err, &e) {
		return rlog.Result{Offset: off, Err: e}, nil
	}
	if err != nil {
		return rlog.Result{}, err
	}
	return rlog.Result{Offset: off}, nil
}

// Do runs one mutation.
func (l *Logs) Do(ctx context.Context, m rlog.Mutation) (rlog.Result, error) {
	if err := checkName(m.Name); err != nil {
		return rlog.Result{Err: err}, nil
	}
	zk, err := l.zk(ctx)
	if err != nil {
		return rlog.Result{}, err
	}
	if st := zk.State(); st != client.StateConnected {
		// The member is not reachable now (it lost its leader, or is
		// electing): nothing is sent, another server may take it.
		return rlog.Result{}, fmt.Errorf("%w: zklogs: the session with %v is %v", rlog.ErrUnavailable, l.opts.Servers, st)
	}
	res, err := l.do(ctx, zk, m)
	return res, writeErr(err)
}

func (l *Logs) do(ctx context.Context, zk *client.Conn, m rlog.Mutation) (rlog.Result, error) {
	switch m.Op {
	case rlog.OpCreate:
		return result(0, l.create(ctx, zk, m.Name))
	case rlog.OpAppend:
		return result(l.append(ctx, zk, m.Name, m.Offset, m.Payload))
	case rlog.OpTrim:
		return result(l.trim(ctx, zk, m.Name, m.Offset))
	case rlog.OpSeal:
		return result(l.seal(ctx, zk, m.Name))
	case rlog.OpDelete:
		return result(0, l.delete(ctx, zk, m.Name))
	}
	e := fail(rlog.CodeBadRequest, m.Name, rlog.Control{}, -1)
	e.Detail = fmt.Sprintf("unknown operation %v", m.Op)
	return rlog.Result{Err: e}, nil
}

// writeErr marks a write's failure of the session (no reply, no
// session) as ErrSessionLost: its outcome is unknown, and this server
// cannot serve until its session is back, so the caller should go to
// another (before, such a failure answered Internal, and a client kept
// sending to a member that had lost its quorum).
func writeErr(err error) error {
	if sessionFailure(err) && !errors.Is(err, rlog.ErrUnavailable) {
		return fmt.Errorf("%w: %w", rlog.ErrSessionLost, err)
	}
	return err
}

func sessionFailure(err error) bool {
	return errors.Is(err, wire.CodeConnectionLoss) || errors.Is(err, wire.CodeSessionExpired) || errors.Is(err, wire.CodeOperationTimeout)
}

func (l *Logs) create(ctx context.Context, zk *client.Conn, name string) error {
	acl := client.WorldACL(client.PermAll)
	_, err := zk.Create(ctx, l.logPath(name), rlog.Control{}.Encode(), acl, client.ModePersistent)
	if errors.Is(err, wire.CodeNoNode) {
		// The root itself is missing: make it, then the log.
		if _, err := zk.Create(ctx, l.root, nil, acl, client.ModePersistent); err != nil && !errors.Is(err, wire.CodeNodeExists) {
			return fmt.Errorf("zklogs: create the root %s: %w", l.root, err)
		}
		_, err = zk.Create(ctx, l.logPath(name), rlog.Control{}.Encode(), acl, client.ModePersistent)
	}
	if errors.Is(err, wire.CodeNodeExists) {
		c, _, _, gerr := l.get(ctx, zk, name, false)
		if gerr != nil {
			return gerr
		}
		return fail(rlog.CodeExists, name, c, -1)
	}
	return err
}

// append appends data at the log's end, or only at expect if that is not
// rlog.NoOffset. An append whose bytes are already at expect (a retry
// whose first attempt committed) returns expect without a second copy.
//
// The multi goes first against the log's pipe (pipeline.go): the record
// as the multis already sent will leave it, so appends from this server
// follow each other on the session without waiting for one another.
// Every answer other than a multi's success, and any retry after a
// failed multi, is decided on a record just read with no multi of this
// server's in flight.
func (l *Logs) append(ctx context.Context, zk *client.Conn, name string, expect int64, data []byte) (int64, error) {
	n := int64(len(data))
	p := l.pipe(name)
	resyncs := 0
	// This member's tree may lag the leader's: a read here is not
	// linearizable (ZooKeeper's reads are not). A refusal must be decided
	// on the log as it is, so before refusing on a record read here the
	// member is synced (once) and the record read again. lost is the
	// version a multi just lost to: a record read back at or below it is
	// the member's stale copy, and a sync, not a busy retry, brings it up.
	synced := false
	lost := int32(-1)
	for range maxCASRetries {
		p.mu.Lock()
		if !p.valid || !appendable(p.c, expect, n, l.opts.MaxAppend) {
			// The record to send against is unknown, or it refuses this
			// append: wait for the multis in flight, whose outcome
			// decides the record, then read it.
			if idle := p.idle; idle != nil {
				p.mu.Unlock()
				select {
				case <-idle:
				case <-ctx.Done():
					return 0, ctx.Err()
				}
				continue
			}
			sent := p.sent
			p.mu.Unlock()
			c, ver, _, err := l.get(ctx, zk, name, false)
			if err != nil {
				return 0, err
			}
			stale := ver <= lost
			if !synced && (stale || !appendable(c, expect, n, l.opts.MaxAppend)) {
				if _, err := zk.Sync(ctx, l.logPath(name)); err != nil {
					return 0, readErr(err)
				}
				synced, lost = true, -1
				l.forget(name)
				continue
			}
			if !appendable(c, expect, n, l.opts.MaxAppend) {
				return l.refuse(ctx, zk, name, c, expect, data)
			}
			p.install(sent, c, ver)
			continue
		}
		c, ver := p.c, p.ver
		next := c
		next.End += n
		f := zk.MultiAsync(
			client.SetDataOp(l.logPath(name), next.Encode(), ver),
			client.CreateOp(l.entryPath(name, c.End), data, client.WorldACL(client.PermAll), client.ModePersistent))
		p.sendLocked(next)
		p.mu.Unlock()
		_, err := f.Wait(ctx)
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			// The multi is still out: its answer keeps the pipe's count
			// (a future always completes, at the latest when the session
			// closes).
			go func() {
				_, err := f.Result()
				p.done(err == nil)
			}()
			return 0, err
		}
		p.done(err == nil)
		switch {
		case err == nil:
			return c.End, nil
		case errors.Is(err, wire.CodeBadVersion):
			// Another writer moved the end, or a multi before this one
			// failed: read again.
			lost, synced = ver, false
			continue
		case refused(err) && resyncs < maxResyncs:
			// The record was stale though its version matched: a log
			// deleted and created again reaches the version it had (from
			// memory, or from this member's tree, which may lag the
			// leader's), or another writer's changes reached the version
			// a pipelined multi carries; prep's rules for control
			// records refuse the multi. Bring the member up to date,
			// then read again.
			resyncs++
			if _, err := zk.Sync(ctx, l.logPath(name)); err != nil {
				return 0, readErr(err)
			}
			continue
		case errors.Is(err, wire.CodeNoNode):
			return 0, fail(rlog.CodeNotFound, name, rlog.Control{}, expect)
		}
		return 0, err // the outcome is unknown
	}
	return 0, fmt.Errorf("zklogs: append to %s: the log changed under %d tries", name, maxCASRetries)
}

// refused reports whether a multi failed as a whole before anything was
// applied because of the state it met (not a lost connection).
func refused(err error) bool {
	return errors.Is(err, wire.CodeNoNode) || errors.Is(err, wire.CodeBadArguments) || errors.Is(err, wire.CodeNodeExists)
}

// appendable reports whether an append of n bytes at expect goes ahead on
// record c.
func appendable(c rlog.Control, expect, n, maxAppend int64) bool {
	return n > 0 && n <= maxAppend && (expect == rlog.NoOffset || expect == c.End) && !c.Sealed
}

// refuse answers an append that record c (just read) does not take: its
// failure, or expect for a retry whose bytes are already there.
func (l *Logs) refuse(ctx context.Context, zk *client.Conn, name string, c rlog.Control, expect int64, data []byte) (int64, error) {
	switch {
	case len(data) == 0:
		e := fail(rlog.CodeBadRequest, name, c, expect)
		e.Detail = "an append carries at least one byte"
		return 0, e
	case int64(len(data)) > l.opts.MaxAppend:
		e := fail(rlog.CodeTooLarge, name, c, expect)
		e.Limit = l.opts.MaxAppend
		return 0, e
	case expect != rlog.NoOffset && expect != c.End:
		if expect >= c.Start && expect < c.End {
			if got, _, err := zk.Get(ctx, l.entryPath(name, expect)); err == nil && bytes.Equal(got, data) {
				return expect, nil
			}
		}
		return 0, fail(rlog.CodeWrongOffset, name, c, expect)
	}
	return 0, fail(rlog.CodeSealed, name, c, expect)
}

// update applies f to the log's control record until the write wins; f
// returns the record to write, or ok=false to write nothing.
func (l *Logs) update(ctx context.Context, zk *client.Conn, name string, f func(rlog.Control) (rlog.Control, bool, error)) (rlog.Control, error) {
	for range maxCASRetries {
		c, ver, _, err := l.get(ctx, zk, name, false)
		if err != nil {
			return c, err
		}
		next, ok, err := f(c)
		if err != nil || !ok {
			return c, err
		}
		_, err = zk.Set(ctx, l.logPath(name), next.Encode(), ver)
		switch {
		case err == nil:
			l.forget(name) // appends read the record again
			return next, nil
		case errors.Is(err, wire.CodeBadVersion):
			continue
		case errors.Is(err, wire.CodeNoNode):
			l.forget(name)
			return c, fail(rlog.CodeNotFound, name, rlog.Control{}, -1)
		}
		l.forget(name)
		return c, err
	}
	return rlog.Control{}, fmt.Errorf("zklogs: update of %s: the log changed under %d tries", name, maxCASRetries)
}

// trim moves the start up to off and deletes the entries wholly below it.
func (l *Logs) trim(ctx context.Context, zk *client.Conn, name string, off int64) (int64, error) {
	c, err := l.update(ctx, zk, name, func(c rlog.Control) (rlog.Control, bool, error) {
		switch {
		case off > c.End:
			return c, false, fail(rlog.CodeOutOfRange, name, c, off)
		case off < 0:
			e := fail(rlog.CodeBadRequest, name, c, off)
			e.Detail = "a trim offset is not negative"
			return c, false, e
		case off <= c.Start:
			return c, false, nil // monotonic: already there
		}
		c.Start = off
		return c, true, nil
	})
	if err != nil {
		return 0, err
	}
	return c.Start, l.deleteBelow(ctx, zk, name, c.Start, c.End)
}

// deleteBelow deletes the entries that end at or below off (end is the
// log's end, where the last entry ends).
func (l *Logs) deleteBelow(ctx context.Context, zk *client.Conn, name string, off, end int64) error {
	offs, err := l.entries(ctx, zk, name)
	if err != nil {
		return err
	}
	var doomed []string
	for i, o := range offs {
		next := end
		if i+1 < len(offs) {
			next = offs[i+1]
		}
		if next > off || o >= off {
			break
		}
		doomed = append(doomed, l.entryPath(name, o))
	}
	return deleteAll(ctx, zk, doomed)
}

// deleteAll deletes paths, deleteBatch in flight at a time; a path gone
// already is no error.
func deleteAll(ctx context.Context, zk *client.Conn, paths []string) error {
	for len(paths) > 0 {
		n := min(len(paths), deleteBatch)
		fs := make([]*client.Future[struct{}], n)
		for i, p := range paths[:n] {
			fs[i] = zk.DeleteAsync(p, -1)
		}
		for _, f := range fs {
			if _, err := f.Wait(ctx); err != nil && !errors.Is(err, wire.CodeNoNode) {
				return err
			}
		}
		paths = paths[n:]
	}
	return nil
}

// entries returns the offsets of the log's entries, ascending; children
// that are not entries are skipped.
func (l *Logs) entries(ctx context.Context, zk *client.Conn, name string) ([]int64, error) {
	kids, err := zk.Children(ctx, l.logPath(name))
	if errors.Is(err, wire.CodeNoNode) {
		return nil, fail(rlog.CodeNotFound, name, rlog.Control{}, -1)
	}
	if err != nil {
		return nil, err
	}
	offs := make([]int64, 0, len(kids))
	for _, k := range kids {
		if o, ok := rlog.ParseEntryName(k); ok {
			offs = append(offs, o)
		}
	}
	slices.Sort(offs)
	return offs, nil
}

func (l *Logs) seal(ctx context.Context, zk *client.Conn, name string) (int64, error) {
	c, err := l.update(ctx, zk, name, func(c rlog.Control) (rlog.Control, bool, error) {
		if c.Sealed {
			return c, false, nil
		}
		c.Sealed = true
		return c, true, nil
	})
	return c.End, err
}

// delete seals the log (so no append races the deletes), deletes its
// entries, then the log.
func (l *Logs) delete(ctx context.Context, zk *client.Conn, name string) error {
	if _, err := l.seal(ctx, zk, name); err != nil {
		return err
	}
	for range maxCASRetries {
		kids, err := zk.Children(ctx, l.logPath(name))
		if errors.Is(err, wire.CodeNoNode) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		paths := make([]string, len(kids))
		for i, k := range kids {
			paths[i] = l.logPath(name) + "/" + k
		}
		if err := deleteAll(ctx, zk, paths); err != nil {
			return err
		}
		err = zk.Delete(ctx, l.logPath(name), -1)
		if err == nil || errors.Is(err, wire.CodeNoNode) {
			l.forget(name)
			return nil
		}
		if !errors.Is(err, wire.CodeNotEmpty) {
			return err
		}
	}
	return fmt.Errorf("zklogs: delete of %s: children keep appearing", name)
}

// Stat returns the log's positions. Everything the tree holds has
// committed, so the committed end is the end.
func (l *Logs) Stat(ctx context.Context, name string) (rlog.Stat, error) {
	if err := checkName(name); err != nil {
		return rlog.Stat{}, err
	}
	zk, err := l.zk(ctx)
	if err != nil {
		return rlog.Stat{}, err
	}
	c, _, _, err := l.get(ctx, zk, name, false)
	if err != nil {
		return rlog.Stat{}, readErr(err)
	}
	return statOf(name, c), nil
}

func statOf(name string, c rlog.Control) rlog.Stat {
	return rlog.Stat{Name: name, Start: c.Start, End: c.End, Committed: c.End, Sealed: c.Sealed}
}

// Read returns up to max bytes from off. At the end, with wait, it
// watches the log's znode and reads again when it changes.
func (l *Logs) Read(ctx context.Context, name string, off, max int64, wait bool) (rlog.ReadResult, error) {
	if err := checkName(name); err != nil {
		return rlog.ReadResult{}, err
	}
	zk, err := l.zk(ctx)
	if err != nil {
		return rlog.ReadResult{}, err
	}
	r, err := l.read(ctx, zk, name, off, max, wait)
	return r, readErr(err)
}

// readErr marks a read's failure of the session (no reply, no session)
// as ErrUnavailable: a read changes nothing, so another server may take
// it. A write's is left as it is: its outcome is unknown.
func readErr(err error) error {
	if sessionFailure(err) {
		return fmt.Errorf("%w: %w", rlog.ErrUnavailable, err)
	}
	return err
}

func (l *Logs) read(ctx context.Context, zk *client.Conn, name string, off, max int64, wait bool) (rlog.ReadResult, error) {
	for {
		c, _, ch, err := l.get(ctx, zk, name, wait)
		if err != nil {
			return rlog.ReadResult{}, err
		}
		switch {
		case off < c.Start:
			return rlog.ReadResult{}, fail(rlog.CodeTruncated, name, c, off)
		case off > c.End:
			return rlog.ReadResult{}, fail(rlog.CodeOutOfRange, name, c, off)
		case off < c.End:
			return l.readAt(ctx, zk, name, c, off, max)
		case !wait || c.Sealed:
			return rlog.ReadResult{Next: off, Stat: statOf(name, c)}, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return rlog.ReadResult{Next: off, Stat: statOf(name, c)}, nil
		}
	}
}

// readAt reads from off (start <= off < end) up to max bytes, entry by
// entry: an entry's name is its offset and the next one's is its end.
func (l *Logs) readAt(ctx context.Context, zk *client.Conn, name string, c rlog.Control, off, max int64) (rlog.ReadResult, error) {
	max = min(max, c.End-off)
	at := off // offset of the entry holding off
	data, _, err := zk.Get(ctx, l.entryPath(name, at))
	if errors.Is(err, wire.CodeNoNode) {
		// off is inside an entry: find the entry that starts last at or
		// below it.
		offs, eerr := l.entries(ctx, zk, name)
		if eerr != nil {
			return rlog.ReadResult{}, eerr
		}
		i, found := slices.BinarySearch(offs, off)
		if !found {
			i--
		}
		if i < 0 {
			return rlog.ReadResult{}, l.gone(ctx, zk, name, off)
		}
		at = offs[i]
		data, _, err = zk.Get(ctx, l.entryPath(name, at))
	}
	if errors.Is(err, wire.CodeNoNode) {
		return rlog.ReadResult{}, l.gone(ctx, zk, name, off)
	}
	if err != nil {
		return rlog.ReadResult{}, err
	}
	if at+int64(len(data)) <= off {
		return rlog.ReadResult{}, fmt.Errorf("zklogs: log %s: the entry at %d holds %d bytes and does not reach %d: entries missing", name, at, len(data), off)
	}
	out := make([]byte, 0, max)
	out = append(out, data[off-at:min(int64(len(data)), off-at+max)]...)
	for int64(len(out)) < max {
		at += int64(len(data))
		data, _, err = zk.Get(ctx, l.entryPath(name, at))
		if errors.Is(err, wire.CodeNoNode) {
			break // deleted meanwhile; the caller reads on from Next
		}
		if err != nil {
			return rlog.ReadResult{}, err
		}
		out = append(out, data[:min(int64(len(data)), max-int64(len(out)))]...)
	}
	return rlog.ReadResult{Data: out, Next: off + int64(len(out)), Stat: statOf(name, c)}, nil
}

// gone explains an entry missing under the start: the log was trimmed or
// deleted since its record was read.
func (l *Logs) gone(ctx context.Context, zk *client.Conn, name string, off int64) error {
	c, _, _, err := l.get(ctx, zk, name, false)
	if err != nil {
		return err
	}
	if off < c.Start {
		return fail(rlog.CodeTruncated, name, c, off)
	}
	return fmt.Errorf("zklogs: log %s: no entry holds offset %d (start %d, end %d): entries were removed by another client", name, off, c.Start, c.End)
}
