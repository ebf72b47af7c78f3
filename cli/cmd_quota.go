package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/datatree"
	"github.com/corral-db/corral/wire"
)

// Quota commands, as zkCli 3.9's SetQuotaCommand, ListQuotaCommand and
// DelQuotaCommand: they only read and write the znodes under
// /zookeeper/quota; the server keeps the usage (datatree/quota.go).

// Like zkCli, a rejected option value or a missing option prints why and
// is not a failure (exit status 0); a failed check or call is.

// quotaFlags are setquota's and delquota's options, one of which may be
// given (zkCli's OptionGroup).
const quotaFlags = "nbNB"

func oneQuotaFlag(o *opts) (byte, error) {
	var got byte
	for i := 0; i < len(quotaFlags); i++ {
		c := quotaFlags[i]
		if o.has(c) {
			if got != 0 {
				return 0, usagef(fmt.Sprintf("The option '%c' was specified but an option from this group has already been selected: '%c'", c, got))
			}
			got = c
		}
	}
	return got, nil
}

func cmdSetQuota(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	if strings.HasPrefix(path, datatree.QuotaPath) {
		fmt.Fprintln(s.cfg.Stderr, "cannot set a quota under the path: "+datatree.QuotaPath)
		return nil
	}
	flag, err := oneQuotaFlag(o)
	if err != nil {
		return err
	}
	if flag == 0 {
		c, _ := lookup("setquota")
		fmt.Fprintln(s.cfg.Stderr, c.usageText())
		return nil
	}
	quota := datatree.StatsTrack{datatree.StatCount: -1, datatree.StatBytes: -1,
		datatree.StatCountHardLimit: -1, datatree.StatByteHardLimit: -1}
	v, err := strconv.ParseInt(o.values[flag], 10, 64)
	if err != nil || (flag == 'n' || flag == 'N') && v != int64(int32(v)) {
		fmt.Fprintln(s.cfg.Stderr, "NumberFormatException happens when parsing the option value")
		return nil
	}
	switch flag {
	case 'n', 'N':
		if v <= 0 {
			fmt.Fprintln(s.cfg.Stderr, "the num quota must be greater than zero")
			return nil
		}
	default:
		if v < 0 {
			fmt.Fprintln(s.cfg.Stderr, "the bytes quota must be greater than or equal to zero")
			return nil
		}
	}
	quota[map[byte]string{'n': datatree.StatCount, 'b': datatree.StatBytes,
		'N': datatree.StatCountHardLimit, 'B': datatree.StatByteHardLimit}[flag]] = v
	if err := validatePath(path, false); err != nil {
		return err
	}
	return createQuota(ctx, s.conn, path, quota, out)
}

// createQuota is SetQuotaCommand.createQuota.
func createQuota(ctx context.Context, c *client.Conn, path string, quota datatree.StatsTrack, out io.Writer) error {
	st, err := c.Exists(ctx, path)
	if err != nil {
		return &opError{path, err}
	}
	if st == nil {
		return &failure{path + " does not exist."}
	}
	if err := checkChildQuota(ctx, c, path); err != nil {
		return err
	}
	if err := checkParentQuota(ctx, c, path); err != nil {
		return err
	}
	qp := datatree.QuotaPath
	for _, part := range strings.Split(path, "/")[1:] {
		qp += "/" + part
		if _, err := c.Create(ctx, qp, nil, client.WorldACL(client.PermAll), client.ModePersistent); err != nil && !errors.Is(err, wire.CodeNodeExists) {
			return &opError{qp, err}
		}
	}
	limitPath, statPath := datatree.QuotaLimitPath(path), datatree.QuotaStatPath(path)
	st, err = c.Exists(ctx, limitPath)
	if err != nil {
		return &opError{limitPath, err}
	}
	if st == nil {
		if _, err := c.Create(ctx, limitPath, []byte(quota.String()), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			return &opError{limitPath, err}
		}
		zero := datatree.StatsTrack{datatree.StatCount: 0, datatree.StatBytes: 0}
		if _, err := c.Create(ctx, statPath, []byte(zero.String()), client.WorldACL(client.PermAll), client.ModePersistent); err != nil {
			return &opError{statPath, err}
		}
		return warnQuota(ctx, c, quota, statPath, out)
	}
	data, _, err := c.Get(ctx, limitPath)
	if err != nil {
		return &opError{limitPath, err}
	}
	cur := datatree.ParseStatsTrack(data)
	for k, v := range quota {
		if v > -1 {
			cur[k] = v
		}
	}
	if err := warnQuota(ctx, c, cur, statPath, out); err != nil {
		return err
	}
	if _, err := c.Set(ctx, limitPath, []byte(cur.String()), -1); err != nil {
		return &opError{limitPath, err}
	}
	return nil
}

// warnQuota prints zkCli's warnings for limits already below the usage.
func warnQuota(ctx context.Context, c *client.Conn, limits datatree.StatsTrack, statPath string, out io.Writer) error {
	data, _, err := c.Get(ctx, statPath)
	if err != nil {
		return &opError{statPath, err}
	}
	usage := datatree.ParseStatsTrack(data)
	below := func(soft, hard, cur int64) bool { return soft > -1 && soft < cur || hard > -1 && hard < cur }
	if n := usage.Get(datatree.StatCount); below(limits.Get(datatree.StatCount), limits.Get(datatree.StatCountHardLimit), n) {
		fmt.Fprintf(out, "[Warning]: the count quota you create is less than the existing count:%d\n", n)
	}
	if n := usage.Get(datatree.StatBytes); below(limits.Get(datatree.StatBytes), limits.Get(datatree.StatByteHardLimit), n) {
		fmt.Fprintf(out, "[Warning]: the bytes quota you create is less than the existing bytes:%d\n", n)
	}
	return nil
}

// checkChildQuota refuses a quota on path if a node below it has one.
func checkChildQuota(ctx context.Context, c *client.Conn, path string) error {
	root := datatree.QuotaPath + path
	var walk func(p string) error
	walk = func(p string) error {
		kids, err := c.Children(ctx, p)
		if errors.Is(err, wire.CodeNoNode) {
			return nil
		}
		if err != nil {
			return &opError{p, err}
		}
		for _, k := range kids {
			if p != root && k == datatree.QuotaLimitNode {
				return &failure{path + " has a child " + strings.TrimPrefix(p, datatree.QuotaPath) + " which has a quota"}
			}
		}
		for _, k := range kids {
			if err := walk(p + "/" + k); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

// checkParentQuota refuses a quota on path if an ancestor has one.
func checkParentQuota(ctx context.Context, c *client.Conn, path string) error {
	parts := strings.Split(path, "/")
	qp := datatree.QuotaPath
	for i := 1; i < len(parts)-1; i++ {
		qp += "/" + parts[i]
		kids, err := c.Children(ctx, qp)
		if errors.Is(err, wire.CodeNoNode) {
			return nil
		}
		if err != nil {
			return &opError{qp, err}
		}
		for _, k := range kids {
			if k == datatree.QuotaLimitNode {
				return &failure{path + " has a parent " + strings.TrimPrefix(qp, datatree.QuotaPath) + " which has a quota"}
			}
		}
	}
	return nil
}

func cmdListQuota(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	fmt.Fprintln(s.cfg.Stderr, "absolute path is "+datatree.QuotaLimitPath(path))
	limits, _, err := s.conn.Get(ctx, datatree.QuotaLimitPath(path))
	var usage []byte
	if err == nil {
		usage, _, err = s.conn.Get(ctx, datatree.QuotaStatPath(path))
	}
	if errors.Is(err, wire.CodeNoNode) {
		fmt.Fprintln(s.cfg.Stderr, "quota for "+path+" does not exist.")
		return nil
	}
	if err != nil {
		return &opError{path, err}
	}
	fmt.Fprintln(out, "Output quota for "+path+" "+datatree.ParseStatsTrack(limits).String())
	fmt.Fprintln(out, "Output stat for "+path+" "+datatree.ParseStatsTrack(usage).String())
	return nil
}

func cmdDelQuota(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	path := o.args[0]
	flag, err := oneQuotaFlag(o)
	if err != nil {
		return err
	}
	limitPath := datatree.QuotaLimitPath(path)
	st, err := s.conn.Exists(ctx, limitPath)
	if err != nil {
		return &opError{path, err}
	}
	if st == nil {
		fmt.Fprintln(out, "Quota does not exist for "+path)
		return nil
	}
	if flag != 0 {
		data, _, err := s.conn.Get(ctx, limitPath)
		if errors.Is(err, wire.CodeNoNode) {
			fmt.Fprintln(s.cfg.Stderr, "quota for "+path+" does not exist.")
			return nil
		}
		if err != nil {
			return &opError{path, err}
		}
		cur := datatree.ParseStatsTrack(data)
		cur[map[byte]string{'n': datatree.StatCount, 'b': datatree.StatBytes,
			'N': datatree.StatCountHardLimit, 'B': datatree.StatByteHardLimit}[flag]] = -1
		if _, err := s.conn.Set(ctx, limitPath, []byte(cur.String()), -1); err != nil {
			return &opError{limitPath, err}
		}
		return nil
	}
	parent := datatree.QuotaPath + path
	kids, err := s.conn.Children(ctx, parent)
	if err != nil {
		return &opError{parent, err}
	}
	for _, k := range kids {
		if err := s.conn.Delete(ctx, parent+"/"+k, -1); err != nil {
			return &opError{parent + "/" + k, err}
		}
	}
	// trimProcQuotas: remove the emptied quota directories upwards.
	for p := parent; p != datatree.QuotaPath; p = p[:strings.LastIndexByte(p, '/')] {
		kids, err := s.conn.Children(ctx, p)
		if err != nil {
			return &opError{p, err}
		}
		if len(kids) > 0 {
			break
		}
		if err := s.conn.Delete(ctx, p, -1); err != nil {
			return &opError{p, err}
		}
	}
	return nil
}
