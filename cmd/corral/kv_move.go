package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	kvpb "github.com/corral-db/corral/api/kv/v1"
	"github.com/corral-db/corral/client"
	"github.com/corral-db/corral/kv/cm"
	"github.com/corral-db/corral/kv/kvserver"
	"github.com/corral-db/corral/kv/ring"
)

// moveFlags are the flags of the range-move admin commands: where the
// configuration manager is (-cm, or asked of any -endpoints node).
type moveFlags struct {
	fs        *flag.FlagSet
	endpoints *string
	cmConnect *string
	cmRoot    *string
	timeout   *time.Duration
	logLevel  *string
}

func newMoveFlags(name string, stderr io.Writer) *moveFlags {
	fs := flag.NewFlagSet("kv "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &moveFlags{
		fs:        fs,
		endpoints: fs.String("endpoints", os.Getenv("CORRAL_KV_ENDPOINTS"), "API addresses host:port,... of the cluster's nodes, to find the CM (default $CORRAL_KV_ENDPOINTS)"),
		cmConnect: fs.String("cm", "", "the configuration manager's connect string (instead of asking -endpoints)"),
		cmRoot:    fs.String("cm-root", "", "the configuration's root znode (default: the nodes', else "+cm.DefaultRoot+")"),
		timeout:   fs.Duration("timeout", 5*time.Minute, "deadline of the command"),
		logLevel:  fs.String("log-level", "warn", "debug|info|warn|error"),
	}
}

// store connects to the CM and returns its Store.
func (f *moveFlags) store(ctx context.Context) (*cm.Store, func(), error) {
	connect, root := *f.cmConnect, *f.cmRoot
	if connect == "" {
		var err error
		if connect, root, err = askCM(ctx, *f.endpoints, root); err != nil {
			return nil, nil, err
		}
	}
	conn, err := client.Connect(ctx, strings.Split(connect, ","), client.SessionTimeout(10*time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to the CM %s: %w", connect, err)
	}
	s, err := cm.NewStore(conn, root)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return s, func() { conn.Close() }, nil
}

func (f *moveFlags) mover(name string, args []string, stderr io.Writer) ([]string, *kvserver.Mover, *cm.Store, context.Context, func(), int) {
	kf := &kvFlags{fs: f.fs}
	pos, err := kf.parse(args)
	if err != nil {
		return nil, nil, nil, nil, nil, kvExitError
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*f.logLevel)); err != nil {
		fmt.Fprintf(stderr, "corral kv %s: -log-level: %v\n", name, err)
		return nil, nil, nil, nil, nil, kvExitError
	}
	ctx, cancel := context.WithTimeout(context.Background(), *f.timeout)
	s, closeStore, err := f.store(ctx)
	if err != nil {
		cancel()
		return nil, nil, nil, nil, nil, kvFail(stderr, name, err)
	}
	m := kvserver.NewMover(s, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	return pos, m, s, ctx, func() { m.Close(); closeStore(); cancel() }, kvExitOK
}

// askCM asks the nodes at endpoints, in turn, where the CM is.
func askCM(ctx context.Context, endpoints, root string) (string, string, error) {
	var last error = errors.New("no -cm and no -endpoints")
	for _, ep := range strings.Split(endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep == "" {
			continue
		}
		cc, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return "", "", err
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := kvpb.NewKVClient(cc).Cluster(cctx, &kvpb.ClusterRequest{})
		cancel()
		cc.Close()
		switch {
		case err != nil:
			last = fmt.Errorf("ask %s for the CM: %w", ep, err)
		case resp.GetCmConnect() == "":
			return "", "", fmt.Errorf("%s is not part of a sharded cluster", ep)
		default:
			if root == "" {
				root = resp.GetCmRoot()
			}
			return resp.GetCmConnect(), root, nil
		}
	}
	return "", "", last
}

// parseGroup parses an RG id: "2" or "rg2".
func parseGroup(s string) (ring.GroupID, error) {
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "rg"), 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("group %q: want 1..%d", s, uint32(1<<32-1))
	}
	return ring.GroupID(n), nil
}

// runKVMove: `corral kv move -range TOKEN -to RG` moves the range ending
// at TOKEN to RG; `-resume` only finishes a move an earlier run left
// recorded, `-abort` undoes it (before its ring switch). It prints
// "moved (START,END] rgA -> rgB ring vN".
func runKVMove(args []string, stdout, stderr io.Writer) int {
	f := newMoveFlags("move", stderr)
	rangeTok := f.fs.String("range", "", "the token ending the range to move (decimal or 0x hex; see 'corral kv ring')")
	to := f.fs.String("to", "", "the RG to move it to")
	resume := f.fs.Bool("resume", false, "only finish the move left recorded, if any")
	abort := f.fs.Bool("abort", false, "undo the move left recorded, if its ring switch has not committed")
	stopAfter := f.fs.String("stop-after", "", "stop after this step ("+strings.Join(kvserver.MoveSteps, "|")+"), leaving the move recorded, as a crashed mover would (a drill; -resume finishes it)")
	pos, m, _, ctx, done, code := f.mover("move", args, stderr)
	if code != kvExitOK {
		return code
	}
	defer done()
	if *stopAfter != "" && !slices.Contains(kvserver.MoveSteps, *stopAfter) {
		fmt.Fprintf(stderr, "corral kv move: -stop-after %q: want one of %s\n", *stopAfter, strings.Join(kvserver.MoveSteps, ", "))
		return kvExitError
	}
	m.StopAfter = *stopAfter
	if len(pos) != 0 || *resume && *abort || (*resume || *abort) != (*rangeTok == "" && *to == "") {
		fmt.Fprintln(stderr, "usage: corral kv move -endpoints E|-cm C -range TOKEN -to RG | -resume | -abort")
		return kvExitError
	}
	if *abort {
		mv, ok, err := m.Abort(ctx)
		if err != nil {
			return kvFail(stderr, "move", err)
		}
		if !ok {
			fmt.Fprintln(stdout, "no move pending")
			return kvExitOK
		}
		fmt.Fprintf(stdout, "aborted %v %v -> %v: stays with %v\n", mv.Range(), mv.From, mv.To, mv.From)
		return kvExitOK
	}
	if *resume {
		mv, ok, err := m.Resume(ctx)
		if err != nil {
			return kvFail(stderr, "move", err)
		}
		if !ok {
			fmt.Fprintln(stdout, "no move pending")
			return kvExitOK
		}
		printMove(stdout, mv)
		return kvExitOK
	}
	tok, err := strconv.ParseUint(*rangeTok, 0, 64)
	if err != nil {
		fmt.Fprintf(stderr, "corral kv move: -range %q: %v\n", *rangeTok, err)
		return kvExitError
	}
	g, err := parseGroup(*to)
	if err != nil {
		fmt.Fprintln(stderr, "corral kv move: -to:", err)
		return kvExitError
	}
	mv, err := m.Move(ctx, tok, g)
	if errors.Is(err, kvserver.ErrStopped) {
		fmt.Fprintf(stdout, "stopped after %s: %v pending\n", *stopAfter, mv)
		return kvExitOK
	}
	if err != nil {
		return kvFail(stderr, "move", err)
	}
	printMove(stdout, mv)
	return kvExitOK
}

func printMove(w io.Writer, mv cm.Move) {
	fmt.Fprintf(w, "moved %v %v -> %v ring v%d\n", mv.Range(), mv.From, mv.To, mv.Ring)
}

// runKVRemoveGroup: `corral kv remove-group RG` moves every range of RG
// away, then deregisters it.
func runKVRemoveGroup(args []string, stdout, stderr io.Writer) int {
	f := newMoveFlags("remove-group", stderr)
	pos, m, _, ctx, done, code := f.mover("remove-group", args, stderr)
	if code != kvExitOK {
		return code
	}
	defer done()
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: corral kv remove-group -endpoints E|-cm C RG")
		return kvExitError
	}
	g, err := parseGroup(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "corral kv remove-group:", err)
		return kvExitError
	}
	moves, err := m.RemoveGroup(ctx, g)
	for _, mv := range moves {
		printMove(stdout, mv)
	}
	if err != nil {
		return kvFail(stderr, "remove-group", err)
	}
	fmt.Fprintf(stdout, "removed %v\n", g)
	return kvExitOK
}

// runKVRing: `corral kv ring` prints the ring: "ring vN" then one
// "TOKEN rgG" line per token (TOKEN in 0x hex, ending its range).
func runKVRing(args []string, stdout, stderr io.Writer) int {
	f := newMoveFlags("ring", stderr)
	pos, _, s, ctx, done, code := f.mover("ring", args, stderr)
	if code != kvExitOK {
		return code
	}
	defer done()
	if len(pos) != 0 {
		fmt.Fprintln(stderr, "usage: corral kv ring -endpoints E|-cm C")
		return kvExitError
	}
	r, err := s.Ring(ctx)
	if err != nil {
		return kvFail(stderr, "ring", err)
	}
	fmt.Fprintf(stdout, "ring v%d\n", r.Version())
	for _, t := range r.Tokens() {
		fmt.Fprintf(stdout, "%#016x %v\n", t.Token, t.Group)
	}
	if mv, ok, err := s.PendingMove(ctx); err == nil && ok {
		fmt.Fprintf(stdout, "pending %v\n", mv)
	}
	return kvExitOK
}
