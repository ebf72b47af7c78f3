package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/status"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client/kvclient"
)

// `corral kv SUBCOMMAND`: the key-value store at a terminal and in
// scripts. The interface is a contract scripts rely on: get prints one
// FAMILY:QUALIFIER=VALUE line per cell, scan one ROW FAMILY:QUALIFIER=VALUE
// line per cell; exit status 0 on success, 1 when get finds nothing, 2 on
// any error.
const (
	kvExitOK       = 0
	kvExitNotFound = 1
	kvExitError    = 2
)

type kvCommand struct {
	name, usage string
	run         func(args []string, stdout, stderr io.Writer) int
}

func kvCommands() []kvCommand {
	return []kvCommand{
		{"ensemble", "ensemble [-n 3] [-dir D]                      start one replica group on loopback; prints 'kv endpoints: ...'", runKVEnsemble},
		{"cluster", "cluster [-groups 2] [-replicas 3] [-dir D] [-spawn] start a sharded cluster and its configuration manager on loopback", runKVCluster},
		{"node", "node -config NODE.json                        run one storage node of a cluster (written by cluster)", runKVNode},
		{"move", "move -endpoints E -range TOKEN -to RG | -resume | -abort  move a token's range to another RG, online", runKVMove},
		{"remove-group", "remove-group -endpoints E RG                  move every range of RG away, then deregister it", runKVRemoveGroup},
		{"ring", "ring -endpoints E                              print the ring's tokens and owners", runKVRing},
		{"create-table", "create-table -endpoints E [-versions N] TABLE FAMILY...", runKVCreateTable},
		{"drop-table", "drop-table -endpoints E TABLE", runKVDropTable},
		{"tables", "tables -endpoints E                            list tables and families", runKVTables},
		{"put", "put -endpoints E TABLE ROW FAMILY:QUALIFIER=VALUE...", runKVPut},
		{"get", "get -endpoints E [-versions N] TABLE ROW [FAMILY[:QUALIFIER]]", runKVGet},
		{"delete", "delete -endpoints E TABLE ROW [FAMILY[:QUALIFIER]]", runKVDelete},
		{"scan", "scan -endpoints E TABLE [-from ROW] [-to ROW] [-limit N]", runKVScan},
	}
}

func runKV(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		kvUsage(os.Stderr)
		if len(args) == 0 {
			return kvExitError
		}
		return kvExitOK
	}
	for _, c := range kvCommands() {
		if c.name == args[0] {
			return c.run(args[1:], os.Stdout, os.Stderr)
		}
	}
	fmt.Fprintf(os.Stderr, "corral kv: unknown command %q\n", args[0])
	kvUsage(os.Stderr)
	return kvExitError
}

func kvUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: corral kv COMMAND [ARGS]")
	for _, c := range kvCommands() {
		fmt.Fprintln(w, "  corral kv "+c.usage)
	}
}

// kvFlags are the flags every client command takes.
type kvFlags struct {
	fs        *flag.FlagSet
	endpoints *string
	timeout   *time.Duration
}

func newKVFlags(name string, stderr io.Writer) *kvFlags {
	fs := flag.NewFlagSet("kv "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &kvFlags{
		fs:        fs,
		endpoints: fs.String("endpoints", os.Getenv("CORRAL_KV_ENDPOINTS"), "API addresses host:port,... (default $CORRAL_KV_ENDPOINTS)"),
		timeout:   fs.Duration("timeout", 10*time.Second, "deadline of the command, retries included"),
	}
}

// parse parses flags placed anywhere among the arguments and returns the
// positional ones.
func (f *kvFlags) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.fs.Parse(args); err != nil {
			return nil, err
		}
		args = f.fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func (f *kvFlags) client() (*kvclient.Client, context.Context, context.CancelFunc, error) {
	var eps []string
	for _, e := range strings.Split(*f.endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		return nil, nil, nil, errors.New("no -endpoints")
	}
	c, err := kvclient.New(kvclient.Config{Endpoints: eps, RequestTimeout: *f.timeout})
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *f.timeout)
	return c, ctx, cancel, nil
}

func kvFail(stderr io.Writer, cmd string, err error) int {
	if st, ok := status.FromError(err); ok {
		fmt.Fprintf(stderr, "corral kv %s: %s (%s)\n", cmd, st.Message(), st.Code())
	} else {
		fmt.Fprintf(stderr, "corral kv %s: %v\n", cmd, err)
	}
	return kvExitError
}

// setup parses args, checks the positional count and connects.
func kvSetup(name string, args []string, stderr io.Writer, minPos, maxPos int, extra func(fs *flag.FlagSet)) ([]string, *kvclient.Client, context.Context, func(), int) {
	f := newKVFlags(name, stderr)
	if extra != nil {
		extra(f.fs)
	}
	pos, err := f.parse(args)
	if err != nil {
		return nil, nil, nil, nil, kvExitError
	}
	if len(pos) < minPos || (maxPos >= 0 && len(pos) > maxPos) {
		for _, c := range kvCommands() {
			if c.name == name {
				fmt.Fprintln(stderr, "usage: corral kv "+c.usage)
			}
		}
		return nil, nil, nil, nil, kvExitError
	}
	c, ctx, cancel, err := f.client()
	if err != nil {
		return nil, nil, nil, nil, kvFail(stderr, name, err)
	}
	return pos, c, ctx, func() { cancel(); c.Close() }, -1
}

func runKVCreateTable(args []string, stdout, stderr io.Writer) int {
	var versions *uint
	pos, c, ctx, done, rc := kvSetup("create-table", args, stderr, 2, -1, func(fs *flag.FlagSet) {
		versions = fs.Uint("versions", 1, "versions kept of each cell")
	})
	if rc >= 0 {
		return rc
	}
	defer done()
	req := &kvpb.CreateTableRequest{Table: pos[0]}
	for _, f := range pos[1:] {
		req.Families = append(req.Families, &kvpb.Family{Name: f, MaxVersions: uint32(*versions)})
	}
	if _, err := c.CreateTable(ctx, req); err != nil {
		return kvFail(stderr, "create-table", err)
	}
	return kvExitOK
}

func runKVDropTable(args []string, stdout, stderr io.Writer) int {
	pos, c, ctx, done, rc := kvSetup("drop-table", args, stderr, 1, 1, nil)
	if rc >= 0 {
		return rc
	}
	defer done()
	if _, err := c.DropTable(ctx, &kvpb.DropTableRequest{Table: pos[0]}); err != nil {
		return kvFail(stderr, "drop-table", err)
	}
	return kvExitOK
}

func runKVTables(args []string, stdout, stderr io.Writer) int {
	_, c, ctx, done, rc := kvSetup("tables", args, stderr, 0, 0, nil)
	if rc >= 0 {
		return rc
	}
	defer done()
	resp, err := c.ListTables(ctx)
	if err != nil {
		return kvFail(stderr, "tables", err)
	}
	for _, t := range resp.Tables {
		var fams []string
		for _, f := range t.Families {
			fams = append(fams, fmt.Sprintf("%s(versions=%d)", f.Name, f.MaxVersions))
		}
		fmt.Fprintf(stdout, "%s %s\n", t.Name, strings.Join(fams, " "))
	}
	return kvExitOK
}

// parseCell reads FAMILY:QUALIFIER=VALUE (the qualifier may be empty;
// the value runs to the end of the argument).
func parseCell(s string) (*kvpb.Cell, error) {
	col, val, ok := strings.Cut(s, "=")
	if !ok {
		return nil, fmt.Errorf("%q: want FAMILY:QUALIFIER=VALUE", s)
	}
	fam, qual, ok := strings.Cut(col, ":")
	if !ok || fam == "" {
		return nil, fmt.Errorf("%q: want FAMILY:QUALIFIER=VALUE", s)
	}
	return &kvpb.Cell{Family: fam, Qualifier: []byte(qual), Value: []byte(val)}, nil
}

// parseColumn reads FAMILY or FAMILY:QUALIFIER.
func parseColumn(s string) *kvpb.Column {
	fam, qual, ok := strings.Cut(s, ":")
	c := &kvpb.Column{Family: fam}
	if ok {
		c.Qualifier = []byte(qual)
	}
	return c
}

func runKVPut(args []string, stdout, stderr io.Writer) int {
	pos, c, ctx, done, rc := kvSetup("put", args, stderr, 3, -1, nil)
	if rc >= 0 {
		return rc
	}
	defer done()
	req := &kvpb.PutRequest{Table: pos[0], Row: []byte(pos[1])}
	for _, a := range pos[2:] {
		cell, err := parseCell(a)
		if err != nil {
			return kvFail(stderr, "put", err)
		}
		req.Cells = append(req.Cells, cell)
	}
	if _, err := c.Put(ctx, req); err != nil {
		return kvFail(stderr, "put", err)
	}
	return kvExitOK
}

func printCells(w io.Writer, prefix string, cells []*kvpb.Cell) {
	for _, cl := range cells {
		fmt.Fprintf(w, "%s%s:%s=%s\n", prefix, cl.Family, cl.Qualifier, cl.Value)
	}
}

func runKVGet(args []string, stdout, stderr io.Writer) int {
	var versions *uint
	pos, c, ctx, done, rc := kvSetup("get", args, stderr, 2, 3, func(fs *flag.FlagSet) {
		versions = fs.Uint("versions", 1, "versions of each cell, newest first")
	})
	if rc >= 0 {
		return rc
	}
	defer done()
	req := &kvpb.GetRequest{Table: pos[0], Row: []byte(pos[1]), Options: &kvpb.ReadOptions{MaxVersions: uint32(*versions)}}
	if len(pos) == 3 {
		req.Options.Columns = []*kvpb.Column{parseColumn(pos[2])}
	}
	resp, err := c.Get(ctx, req)
	if kvclient.IsNotFound(err) {
		return kvExitNotFound
	}
	if err != nil {
		return kvFail(stderr, "get", err)
	}
	printCells(stdout, "", resp.Cells)
	return kvExitOK
}

func runKVDelete(args []string, stdout, stderr io.Writer) int {
	pos, c, ctx, done, rc := kvSetup("delete", args, stderr, 2, 3, nil)
	if rc >= 0 {
		return rc
	}
	defer done()
	req := &kvpb.DeleteRequest{Table: pos[0], Row: []byte(pos[1])}
	if len(pos) == 3 {
		col := parseColumn(pos[2])
		req.Family, req.Qualifier = col.Family, col.Qualifier
	}
	if _, err := c.Delete(ctx, req); err != nil {
		return kvFail(stderr, "delete", err)
	}
	return kvExitOK
}

func runKVScan(args []string, stdout, stderr io.Writer) int {
	var from, to *string
	var limit *uint
	pos, c, ctx, done, rc := kvSetup("scan", args, stderr, 1, 1, func(fs *flag.FlagSet) {
		from = fs.String("from", "", "first row (inclusive)")
		to = fs.String("to", "", "last row (exclusive)")
		limit = fs.Uint("limit", 0, "at most this many rows (0: the server's cap, 10000)")
	})
	if rc >= 0 {
		return rc
	}
	defer done()
	resp, err := c.Scan(ctx, &kvpb.ScanRequest{Table: pos[0], From: []byte(*from), To: []byte(*to), Limit: uint32(*limit)})
	if err != nil {
		return kvFail(stderr, "scan", err)
	}
	for _, r := range resp.Rows {
		printCells(stdout, string(r.Key)+" ", r.Cells)
	}
	return kvExitOK
}
