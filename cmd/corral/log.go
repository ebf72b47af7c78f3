package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corral-db/corral/replica"
	"github.com/corral-db/corral/rlog"
	"github.com/corral-db/corral/rlog/rlogclient"
	"github.com/corral-db/corral/rlog/rlogsvc"
	"github.com/corral-db/corral/transport"
	"github.com/corral-db/corral/vfs"
	"google.golang.org/grpc"
)

const logUsage = `usage:
  corral log create|append|read|follow|trim|seal|stat|delete -endpoints E NAME [...]
    create  NAME                        create an empty log
    append  NAME [-lines] [-expect N]   append standard input as one append (or one per
                                        line with -lines) and print each offset
    read    NAME -offset N [-max BYTES] write committed bytes from N to standard output
                                        (to the committed end without -max)
    follow  NAME [-offset N]            write committed bytes as they commit, until
                                        interrupted or the log is sealed and read
    trim    NAME OFFSET                 move the start up to OFFSET; print start=N
    seal    NAME                        fence appends; print end=N
    stat    NAME                        print start=N end=N committed=N sealed=BOOL
    delete  NAME                        delete the log
  E is HOST:PORT[,HOST:PORT...], the api endpoints corral ensemble prints.

  corral log serve-local -dir D [-listen 127.0.0.1:0]
    run the log service over ONE unreplicated member's state in D (not an
    ensemble: for trying the API and CLI); prints "api endpoints: HOST:PORT".

  corral log serve-member -id N -peers 1=HOST:QPORT:EPORT,... -dir D [-listen ADDR] [-snapcount N]
                          [-loglevel warn]
    run one member of a replica group that holds only logs (zab over TCP
    among the peers, sync mode), serving the API on ADDR; prints
    "api endpoints: HOST:PORT". Writes go to the leader: a client given every
    member's endpoint finds it.
`

// runLog is `corral log SUBCOMMAND ...`.
func runLog(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(os.Stderr, logUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	if sub == "serve-local" {
		return logServeLocal(args)
	}
	if sub == "serve-member" {
		return logServeMember(args)
	}
	fs := flag.NewFlagSet("corral log "+sub, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, logUsage) }
	endpoints := fs.String("endpoints", os.Getenv("CORRAL_API_ENDPOINTS"), "api endpoints HOST:PORT,...")
	offset := fs.Int64("offset", -1, "offset")
	maxBytes := fs.Int64("max", 0, "read at most this many bytes")
	lines := fs.Bool("lines", false, "append: one append per line")
	expect := fs.Int64("expect", -1, "append: the expected offset")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	known := map[string]int{"create": 1, "append": 1, "read": 1, "follow": 1, "trim": 2, "seal": 1, "stat": 1, "delete": 1}
	want, ok := known[sub]
	if !ok {
		fmt.Fprintf(os.Stderr, "corral log: unknown subcommand %q\n%s", sub, logUsage)
		return 2
	}
	if sub == "trim" && len(pos) == 1 && *offset >= 0 {
		pos = append(pos, strconv.FormatInt(*offset, 10))
	}
	if len(pos) != want {
		fmt.Fprintf(os.Stderr, "corral log %s: wrong arguments\n%s", sub, logUsage)
		return 2
	}
	if *endpoints == "" {
		fmt.Fprintf(os.Stderr, "corral log %s: -endpoints is required\n", sub)
		return 2
	}
	if sub == "read" && *offset < 0 {
		fmt.Fprintln(os.Stderr, "corral log read: -offset is required")
		return 2
	}
	c, err := rlogclient.Dial(strings.Split(*endpoints, ","))
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral log:", err)
		return 1
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name := pos[0]
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	switch sub {
	case "create":
		_, err = c.Create(ctx, name)
	case "append":
		err = logAppend(ctx, c, name, os.Stdin, out, *lines, *expect)
	case "read":
		err = logRead(ctx, c, name, *offset, *maxBytes, out)
	case "follow":
		err = c.Follow(ctx, name, max(*offset, 0), func(b []byte) error {
			if _, err := out.Write(b); err != nil {
				return err
			}
			return out.Flush()
		})
	case "trim":
		var off, start int64
		off, err = strconv.ParseInt(pos[1], 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "corral log trim: bad offset %q\n", pos[1])
			return 2
		}
		if start, err = c.Trim(ctx, name, off); err == nil {
			fmt.Fprintf(out, "start=%d\n", start)
		}
	case "seal":
		var end int64
		if end, err = c.Seal(ctx, name); err == nil {
			fmt.Fprintf(out, "end=%d\n", end)
		}
	case "stat":
		var st rlogclient.Stat
		if st, err = c.Stat(ctx, name); err == nil {
			fmt.Fprintf(out, "start=%d end=%d committed=%d sealed=%t\n", st.Start, st.End, st.Committed, st.Sealed)
		}
	case "delete":
		err = c.Delete(ctx, name)
	}
	if err != nil {
		out.Flush()
		fmt.Fprintln(os.Stderr, "corral log:", err)
		return 1
	}
	return 0
}

// parseInterspersed parses flags before, between and after positional
// arguments (the contract writes NAME before some flags).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func logAppend(ctx context.Context, c *rlogclient.Client, name string, in io.Reader, out io.Writer, lines bool, expect int64) error {
	var exp *int64
	if expect >= 0 {
		exp = &expect
	}
	if !lines {
		data, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return errors.New("nothing to append: standard input is empty")
		}
		off, err := c.Append(ctx, name, data, exp)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, off)
		return err
	}
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			off, aerr := c.Append(ctx, name, line, exp)
			if aerr != nil {
				return aerr
			}
			if exp != nil {
				next := off + int64(len(line))
				exp = &next
			}
			fmt.Fprintln(out, off)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func logRead(ctx context.Context, c *rlogclient.Client, name string, off, maxBytes int64, out io.Writer) error {
	remaining := maxBytes
	for maxBytes == 0 || remaining > 0 {
		req := int64(0)
		if maxBytes > 0 {
			req = remaining
		}
		data, next, _, err := c.Read(ctx, name, off, req, 0)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return nil
		}
		if _, err := out.Write(data); err != nil {
			return err
		}
		off = next
		remaining -= int64(len(data))
	}
	return nil
}

// logServeLocal runs the service over one unreplicated member (rlog.Local).
func logServeLocal(args []string) int {
	fs := flag.NewFlagSet("corral log serve-local", flag.ContinueOnError)
	dir := fs.String("dir", "", "the member's directory (data log, WAL, snapshot)")
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || fs.NArg() != 0 {
		fmt.Fprint(os.Stderr, logUsage)
		return 2
	}
	lc, err := rlog.OpenLocal(rlog.LocalOptions{State: rlog.Options{FS: vfs.OS(), Dir: *dir}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral log serve-local:", err)
		return 1
	}
	defer lc.Close()
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral log serve-local:", err)
		return 1
	}
	srv := grpc.NewServer()
	rlogsvc.New(lc).Register(srv)
	fmt.Printf("api endpoints: %s\n", lis.Addr())
	os.Stdout.Sync()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		srv.GracefulStop()
	}()
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "corral log serve-local:", err)
		return 1
	}
	return 0
}

// logServeMember runs one member of a logs-only replica group.
func logServeMember(args []string) int {
	fs := flag.NewFlagSet("corral log serve-member", flag.ContinueOnError)
	id := fs.Uint64("id", 0, "this member's id")
	peersFlag := fs.String("peers", "", "every member: ID=HOST:QPORT:EPORT,...")
	dir := fs.String("dir", "", "the member's directory")
	listen := fs.String("listen", "127.0.0.1:0", "api address")
	snapCount := fs.Int("snapcount", 0, "snapshot every ~N log records (100000 if 0)")
	var level slog.Level = slog.LevelWarn
	fs.TextVar(&level, "loglevel", level, "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	peers := map[uint64]transport.Peer{}
	var voters []uint64
	for _, p := range strings.Split(*peersFlag, ",") {
		k, v, ok := strings.Cut(p, "=")
		pid, err := strconv.ParseUint(k, 10, 64)
		host, ports, ok2 := strings.Cut(v, ":")
		q, e, ok3 := strings.Cut(ports, ":")
		if !ok || !ok2 || !ok3 || err != nil || pid == 0 {
			fmt.Fprintf(os.Stderr, "corral log serve-member: bad peer %q (want ID=HOST:QPORT:EPORT)\n", p)
			return 2
		}
		peers[pid] = transport.Peer{QuorumAddr: net.JoinHostPort(host, q), ElectionAddr: net.JoinHostPort(host, e)}
		voters = append(voters, pid)
	}
	if *dir == "" || *id == 0 || peers[*id] == (transport.Peer{}) || fs.NArg() != 0 {
		fmt.Fprint(os.Stderr, logUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	// The transport starts before the member's driver exists: its
	// progress reports (chunks of a large SNAP) reach the driver once
	// it does.
	var driver atomic.Pointer[replica.Driver]
	tr, err := transport.NewTCP(ctx, transport.TCPConfig{ID: *id, Peers: peers, Logger: logger,
		OnProgress: func(peer uint64) {
			if d := driver.Load(); d != nil {
				d.ReportProgress(peer)
			}
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral log serve-member:", err)
		return 1
	}
	defer tr.Close()
	mb, err := rlog.OpenMember(rlog.MemberConfig{ID: *id, Voters: voters, FS: vfs.OS(), Dir: *dir,
		Send: tr.Send, Backlog: tr.Backlog, Logger: logger, Schedule: replica.Schedule{SnapCount: *snapCount},
		// A 50 ms tick with the server's proportions (a 500 ms tickTime
		// in tenths): initLimit 5 s, syncLimit 2.5 s.
		ElectionTick: 2, HeartbeatTick: 5, InitLimit: 100, SyncLimit: 50,
		SyncProgressEvery: 500 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral log serve-member:", err)
		return 1
	}
	driver.Store(mb.Driver())
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corral log serve-member:", err)
		return 1
	}
	srv := grpc.NewServer()
	rlogsvc.New(mb).Register(srv)
	go srv.Serve(lis)
	fmt.Printf("api endpoints: %s\n", lis.Addr())
	os.Stdout.Sync()
	err = mb.Run(ctx, tr.Recv(), 50*time.Millisecond)
	srv.GracefulStop()
	if cerr := mb.Close(); err == nil {
		err = cerr
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "corral log serve-member:", err)
		return 1
	}
	return 0
}
