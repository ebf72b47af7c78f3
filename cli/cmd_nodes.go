package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/wire"
)

// maxTTL is the largest TTL (ms) a TTL node's ephemeralOwner can encode
// (EphemeralType.TTL's 40 bits).
const maxTTL = 1<<40 - 1

// deprecatedWatch handles zkCli's old "CMD path watch" form: a second
// positional argument turns the watch on, with zkCli's warning.
func deprecatedWatch(s *shell, o *opts, cmd string) bool {
	if len(o.args) > 1 {
		fmt.Fprintf(s.cfg.Stderr, "'%s path [watch]' has been deprecated. Please use '%s [-w] path' instead.\n", cmd, cmd)
		return true
	}
	return o.has('w')
}

func cmdLs(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	watch := deprecatedWatch(s, o, "ls")
	if err := validatePath(path, false); err != nil {
		return err
	}
	if o.has('R') {
		paths, err := s.tree(ctx, path, watch)
		for _, p := range paths {
			fmt.Fprintln(out, p)
		}
		return err
	}
	var (
		children []string
		stat     client.Stat
		ch       <-chan client.Event
		err      error
	)
	switch {
	case o.has('s') && watch:
		children, stat, ch, err = s.conn.Children2W(ctx, path)
	case o.has('s'):
		children, stat, err = s.conn.Children2(ctx, path)
	case watch:
		children, ch, err = s.conn.ChildrenW(ctx, path)
	default:
		children, err = s.conn.Children(ctx, path)
	}
	s.watch(ch)
	if err != nil {
		return &opError{path, err}
	}
	fmt.Fprintln(out, sortedList(children))
	if o.has('s') {
		writeStat(out, stat, s.cfg.Location)
	}
	return nil
}

// tree lists root and its descendants in zkCli's "ls -R" order (ZKUtil's
// visitSubTreeDFS): a node's children, sorted, right after one another,
// then each child's subtree in turn. A node that disappears while being
// listed is skipped; the root missing is an error.
func (s *shell) tree(ctx context.Context, root string, watch bool) ([]string, error) {
	paths := []string{root}
	stack := []string{root}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var (
			children []string
			ch       <-chan client.Event
			err      error
		)
		if watch {
			children, ch, err = s.conn.ChildrenW(ctx, p)
			s.watch(ch)
		} else {
			children, err = s.conn.Children(ctx, p)
		}
		if err != nil {
			if p != root && errors.Is(err, wire.CodeNoNode) {
				continue
			}
			return nil, &opError{p, err}
		}
		slices.Sort(children)
		for i, c := range children {
			children[i] = joinPath(p, c)
		}
		paths = append(paths, children...)
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, children[i])
		}
	}
	return paths, nil
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func joinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

func cmdGet(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	watch := deprecatedWatch(s, o, "get")
	if err := validatePath(path, false); err != nil {
		return err
	}
	var (
		data []byte
		stat client.Stat
		ch   <-chan client.Event
		err  error
	)
	if watch {
		data, stat, ch, err = s.conn.GetW(ctx, path)
		s.watch(ch)
	} else {
		data, stat, err = s.conn.Get(ctx, path)
	}
	if err != nil {
		return &opError{path, err}
	}
	f := formatPlain
	switch {
	case o.has('b'):
		f = formatBase64
	case o.has('x'):
		f = formatHex
	}
	fmt.Fprintln(out, formatData(data, f))
	if o.has('s') {
		writeStat(out, stat, s.cfg.Location)
	}
	return nil
}

func cmdStat(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	watch := deprecatedWatch(s, o, "stat")
	if err := validatePath(path, false); err != nil {
		return err
	}
	var (
		stat *client.Stat
		ch   <-chan client.Event
		err  error
	)
	if watch {
		// The watch is set even when the node does not exist (it then
		// waits for its creation), as in zkCli.
		stat, ch, err = s.conn.ExistsW(ctx, path)
		s.watch(ch)
	} else {
		stat, err = s.conn.Exists(ctx, path)
	}
	if err == nil && stat == nil {
		err = wire.CodeNoNode
	}
	if err != nil {
		return &opError{path, err}
	}
	writeStat(out, *stat, s.cfg.Location)
	return nil
}

func cmdCreate(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	e, seq, container, hasTTL := o.has('e'), o.has('s'), o.has('c'), o.has('t')
	if container && (e || seq) {
		return usagef("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	}
	var ttl int64
	if hasTTL {
		var err error
		if ttl, err = strconv.ParseInt(o.values['t'], 10, 64); err != nil {
			return usagef("-t argument must be a long value")
		}
	}
	switch {
	case hasTTL && e:
		return usagef("TTLs cannot be used with Ephemeral znodes")
	case hasTTL && container:
		return usagef("TTLs cannot be used with Container znodes")
	case hasTTL && (ttl <= 0 || ttl > maxTTL):
		return usagef("ttl must be positive and cannot be larger than: " + strconv.FormatInt(maxTTL, 10))
	}
	mode := client.ModePersistent
	switch {
	case e && seq:
		mode = client.ModeEphemeralSequential
	case e:
		mode = client.ModeEphemeral
	case seq && hasTTL:
		mode = client.ModePersistentSequentialWithTTL
	case seq:
		mode = client.ModePersistentSequential
	case container:
		mode = client.ModeContainer
	case hasTTL:
		mode = client.ModePersistentWithTTL
	}
	path := o.args[0]
	if err := validatePath(path, seq); err != nil {
		return err
	}
	var data []byte // no data argument: null data, as zkCli sends
	if len(o.args) > 1 {
		data = []byte(o.args[1])
	}
	acl := client.WorldACL(client.PermAll)
	if len(o.args) > 2 {
		var err error
		if acl, err = parseACL(o.args[2]); err != nil {
			return err
		}
	}
	var (
		created string
		err     error
	)
	switch {
	case hasTTL:
		created, _, err = s.conn.CreateTTL(ctx, path, data, acl, mode, msDuration(ttl))
	case container:
		created, _, err = s.conn.CreateContainer(ctx, path, data, acl)
	default:
		created, err = s.conn.Create(ctx, path, data, acl, mode)
	}
	if err != nil {
		if errors.Is(err, wire.CodeInvalidACL) {
			// zkCli prints the exception itself first.
			fmt.Fprintln(s.cfg.Stderr, keeperErrorMessage(wire.CodeInvalidACL, path))
		}
		return &opError{path, err}
	}
	fmt.Fprintln(out, "Created "+created)
	return nil
}

func cmdSet(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	data := []byte(o.args[1])
	if o.has('b') {
		var err error
		if data, err = base64.StdEncoding.DecodeString(o.args[1]); err != nil {
			return usagef("data is not valid base64: " + err.Error())
		}
	}
	version, err := o.intValue('v', -1, "-v argument must be an int value")
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	stat, err := s.conn.Set(ctx, path, data, version)
	if err != nil {
		return &opError{path, err}
	}
	if o.has('s') {
		writeStat(out, stat, s.cfg.Location)
	}
	return nil
}

func cmdDelete(s *shell, ctx context.Context, o *opts, _ io.Writer) error {
	path := o.args[0]
	version, err := o.intValue('v', -1, "-v argument must be an int value")
	if err != nil {
		return err
	}
	if len(o.args) > 1 {
		fmt.Fprintln(s.cfg.Stderr, "'delete path [version]' has been deprecated. Please use 'delete [-v version] path' instead.")
		n, err := strconv.ParseInt(o.args[1], 10, 32)
		if err != nil {
			return usagef("version must be an int value")
		}
		version = int32(n)
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	if err := s.conn.Delete(ctx, path, version); err != nil {
		return &opError{path, err}
	}
	return nil
}

// deleteAllInFlight bounds the multis deleteall keeps in flight (ZKUtil's
// rate limit).
const deleteAllInFlight = 10

// cmdDeleteAll deletes a subtree as zkCli's deleteall (ZKUtil's
// deleteRecursive): list it breadth first, then delete from the deepest
// level up in multis of -b deletes, several in flight (the client
// completes them in order, so a parent's delete never overtakes its
// children's).
func cmdDeleteAll(s *shell, ctx context.Context, o *opts, _ io.Writer) error {
	path := o.args[0]
	batch, err := o.intValue('b', 1000, "-b argument must be an int value")
	if err != nil {
		return err
	}
	if batch <= 0 {
		return usagef("-b argument must be a positive int value")
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	nodes := []string{path}
	for i := 0; i < len(nodes); i++ {
		children, err := s.conn.Children(ctx, nodes[i])
		if err != nil {
			if i > 0 && errors.Is(err, wire.CodeNoNode) {
				continue // deleted meanwhile
			}
			return &opError{nodes[i], err}
		}
		for _, c := range children {
			nodes = append(nodes, joinPath(nodes[i], c))
		}
	}
	var (
		inFlight []*client.Future[[]client.OpResult]
		failed   error
	)
	wait := func() {
		if _, err := inFlight[0].Wait(ctx); err != nil && failed == nil {
			failed = err
		}
		inFlight = inFlight[1:]
	}
	var ops []client.Op
	for i := len(nodes) - 1; i >= 0 && failed == nil; i-- {
		ops = append(ops, client.DeleteOp(nodes[i], -1))
		if len(ops) < int(batch) && i > 0 {
			continue
		}
		if len(inFlight) == deleteAllInFlight {
			wait()
		}
		inFlight = append(inFlight, s.conn.MultiAsync(ops...))
		ops = nil
	}
	for len(inFlight) > 0 {
		wait()
	}
	switch {
	case failed == nil:
		return nil
	case errors.Is(failed, context.Canceled):
		return failed
	}
	return &failure{"Failed to delete some node(s) in the subtree!"}
}

func cmdGetAllChildrenNumber(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	if err := validatePath(path, false); err != nil {
		return err
	}
	n, err := s.conn.GetAllChildrenNumber(ctx, path)
	if err != nil {
		return &opError{path, err}
	}
	fmt.Fprintln(out, n)
	return nil
}

func cmdGetEphemerals(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	prefix := "/"
	if len(o.args) > 0 {
		prefix = o.args[0]
	}
	paths, err := s.conn.GetEphemerals(ctx, prefix)
	if err != nil {
		return &opError{prefix, err}
	}
	fmt.Fprintln(out, sortedList(paths))
	return nil
}

func cmdSync(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	if err := validatePath(path, false); err != nil {
		return err
	}
	if _, err := s.conn.Sync(ctx, path); err != nil {
		var code wire.Code
		if errors.As(err, &code) {
			fmt.Fprintf(out, "Sync has failed. rc=%d\n", int32(code))
			return &failure{}
		}
		return err
	}
	fmt.Fprintln(out, "Sync is OK")
	return nil
}
