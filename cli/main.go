package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"
)

// DefaultServer is zkCli's default -server.
const DefaultServer = "localhost:2181"

// DefaultTimeout is zkCli's default -timeout (the requested session
// timeout, also the bound on connecting).
const DefaultTimeout = 30 * time.Second

// Config is what a run of the CLI gets from its environment.
type Config struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	// Terminal says that Stdin and Stdout are a terminal: the shell then
	// edits lines and shows a prompt. Otherwise it reads plain lines.
	Terminal bool
	// TerminalFd is the terminal's file descriptor, put in raw mode
	// while a line is read and asked for its width; -1 if there is none
	// (tests drive the line editor through a pipe).
	TerminalFd int
	// Interrupts, if set, delivers Ctrl-C (SIGINT); each one cancels the
	// command that is running. Leave nil for the default (exit).
	Interrupts <-chan os.Signal

	// Location is the time zone of ctime and mtime (default time.Local,
	// as Java prints them).
	Location *time.Location
	// Logger receives the client's diagnostics (default: discarded).
	Logger *slog.Logger
	// Version is printed by the version command.
	Version string
}

// Main runs `corral cli` with args (what follows "cli" on the command
// line): flags, then either nothing (the shell) or one command and its
// arguments. It returns the exit status (see the package documentation).
func Main(ctx context.Context, cfg Config, args []string) int {
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	fs := flag.NewFlagSet("cli", flag.ContinueOnError)
	fs.SetOutput(cfg.Stderr)
	server := fs.String("server", DefaultServer, "servers to connect to: `host:port[,host:port...][/chroot]`")
	timeout := fs.String("timeout", strconv.Itoa(int(DefaultTimeout.Milliseconds())), "session timeout in `ms`")
	var tf tlsFlags
	tf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(cfg.Stderr, "usage: corral cli [-server host:port[,...]] [-timeout ms] [-client-configuration file | -tls ...] [CMD ARGS]")
		fs.PrintDefaults()
		fmt.Fprintln(cfg.Stderr, "Without CMD, runs an interactive shell; `corral cli help` lists the commands.")
		fmt.Fprintln(cfg.Stderr, "Exit status: 0 success, 1 the command failed, 2 usage error.")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return ExitOK
		}
		return ExitUsage
	}
	ms, err := strconv.ParseInt(*timeout, 10, 32)
	if err != nil || ms <= 0 {
		fmt.Fprintf(cfg.Stderr, "invalid -timeout %q: want a positive number of milliseconds\n", *timeout)
		return ExitUsage
	}
	s := newShell(cfg, *server, time.Duration(ms)*time.Millisecond)
	defer s.close()
	if s.tls, err = tf.config(cfg.Logger); err != nil {
		fmt.Fprintf(cfg.Stderr, "%v\n", err)
		return ExitUsage
	}
	if fs.NArg() > 0 {
		return s.oneShot(ctx, fs.Args())
	}
	return s.interactive(ctx)
}
