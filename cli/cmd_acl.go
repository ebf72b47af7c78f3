package cli

import (
	"context"
	"fmt"
	"io"
)

func cmdGetACL(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	if err := validatePath(path, false); err != nil {
		return err
	}
	acl, stat, err := s.conn.GetACL(ctx, path)
	if err != nil {
		return &opError{path, err}
	}
	writeACL(out, acl)
	if o.has('s') {
		writeStat(out, stat, s.cfg.Location)
	}
	return nil
}

// cmdSetACL sets a node's ACL, or with -R the ACL of every node of its
// subtree (each with the same -v, as zkCli does).
func cmdSetACL(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	version, err := o.intValue('v', -1, "-v argument must be an int value")
	if err != nil {
		return err
	}
	if err := validatePath(path, false); err != nil {
		return err
	}
	acl, err := parseACL(o.args[1])
	if err != nil {
		return err
	}
	if o.has('R') {
		paths, err := s.tree(ctx, path, false)
		if err != nil {
			return err
		}
		for _, p := range paths {
			if _, err := s.conn.SetACL(ctx, p, acl, version); err != nil {
				return &opError{p, err}
			}
		}
		return nil
	}
	stat, err := s.conn.SetACL(ctx, path, acl, version)
	if err != nil {
		return &opError{path, err}
	}
	if o.has('s') {
		writeStat(out, stat, s.cfg.Location)
	}
	return nil
}

// cmdAddAuth adds a credential (addauth digest user:password). Unlike
// zkCli, which learns of a refusal only from a later AuthFailed event,
// the client reports it at once.
func cmdAddAuth(s *shell, ctx context.Context, o *opts, _ io.Writer) error {
	var auth []byte
	if len(o.args) > 1 {
		auth = []byte(o.args[1])
	}
	if err := s.conn.AddAuth(ctx, o.args[0], auth); err != nil {
		return &opError{"", err}
	}
	return nil
}

func cmdWhoAmI(s *shell, ctx context.Context, _ *opts, out io.Writer) error {
	ids, err := s.conn.WhoAmI(ctx)
	if err != nil {
		return &opError{"", err}
	}
	fmt.Fprintln(out, "Auth scheme: User")
	for _, id := range ids {
		fmt.Fprintf(out, "%s: %s\n", id.AuthScheme, id.User)
	}
	return nil
}
