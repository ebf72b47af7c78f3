package cli

import (
	"context"
	"io"

	"github.com/corral-db/corral/client"
)

// cmdAddWatch sets a persistent watch; its events are printed until
// removewatches (or the end of the session).
func cmdAddWatch(s *shell, ctx context.Context, o *opts, _ io.Writer) error {
	path := o.args[0]
	recursive := true
	if m, ok := o.values['m']; ok {
		switch m {
		case "PERSISTENT":
			recursive = false
		case "PERSISTENT_RECURSIVE":
		default:
			c, _ := lookup("addWatch")
			return usagef(c.usageText())
		}
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	w, err := s.conn.AddWatch(ctx, path, recursive)
	if err != nil {
		return &opError{path, err}
	}
	if s.printer != nil {
		s.printer.Persistent(w)
	}
	return nil
}

// cmdRemoveWatches removes watches of one type (-c children, -d data, -p
// persistent, -r persistent recursive, -a any: the default). -l (remove
// locally without a server) is accepted for compatibility; the client
// always removes its local watches.
func cmdRemoveWatches(s *shell, ctx context.Context, o *opts, _ io.Writer) error {
	path := o.args[0]
	t := client.WatchAny
	switch {
	case o.has('c'):
		t = client.WatchChildren
	case o.has('d'):
		t = client.WatchData
	case o.has('p'):
		t = client.WatchPersistent
	case o.has('r'):
		t = client.WatchPersistentRecursive
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	if err := s.conn.RemoveWatches(ctx, path, t); err != nil {
		return &opError{path, err}
	}
	return nil
}
