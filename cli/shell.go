package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-db/corral/client"
)

// historyKeep bounds the lines kept for history and redo.
const historyKeep = 1000

// shell is one run of the CLI: the connection, the history and the
// output. Commands run one at a time on the caller's goroutine.
type shell struct {
	cfg     Config
	servers string
	timeout time.Duration
	// tls, if set, makes the connections TLS (tlsflags.go).
	tls *tls.Config

	conn    *client.Conn // nil when not connected
	out     *syncWriter  // stdout, shared with the printer
	printer *printer     // nil in one-shot mode: no events are printed

	stopPrinter context.CancelFunc
	printerDone sync.WaitGroup

	history map[int]string
	count   int // number of the next command, as in zkCli's prompt
	status  int // of the last command
	quit    bool

	quietWatches bool // printwatches off
}

func newShell(cfg Config, servers string, timeout time.Duration) *shell {
	return &shell{
		cfg:     cfg,
		servers: servers,
		timeout: timeout,
		out:     &syncWriter{w: cfg.Stdout},
		history: map[int]string{},
	}
}

// oneShot runs a single command given as separate words.
func (s *shell) oneShot(ctx context.Context, words []string) int {
	s.exec(ctx, words)
	return s.status
}

// interactive reads and runs lines until quit or the end of input, and
// returns the status of the last command.
func (s *shell) interactive(ctx context.Context) int {
	pctx, cancel := context.WithCancel(ctx)
	s.stopPrinter = cancel
	s.printer = newPrinter(s.out)
	s.printerDone.Add(1)
	go func() {
		defer s.printerDone.Done()
		s.printer.run(pctx)
	}()

	var lines lineReader
	if s.cfg.Terminal {
		lines = newTermReader(s.cfg.Stdin, s.cfg.Stdout, s.cfg.TerminalFd)
	} else {
		lines = newPlainReader(s.cfg.Stdin)
	}
	cctx, cancelConnect := s.commandContext(ctx) // Ctrl-C gives up connecting
	s.connect(cctx)
	cancelConnect()
	for !s.quit && ctx.Err() == nil {
		// While the shell waits for a line, events go through the line
		// editor, which redraws the prompt under them.
		if w := lines.Output(); w != nil {
			s.out.Redirect(w)
		}
		line, err := lines.ReadLine(s.prompt())
		s.out.Redirect(s.cfg.Stdout)
		if errors.Is(err, io.EOF) {
			// zkCli exits at the end of input without closing the
			// session first, so it prints no Closed event; neither do we.
			s.printer.SetQuiet(true)
			if s.cfg.Terminal {
				fmt.Fprintln(s.cfg.Stdout) // leave the prompt's line
			}
			break
		}
		if err != nil {
			fmt.Fprintln(s.cfg.Stderr, err)
			s.status = ExitFailed
			break
		}
		s.runLine(ctx, line)
	}
	return s.status
}

// close ends the session and the printer.
func (s *shell) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	if s.printer != nil {
		s.printer.Flush()
		s.stopPrinter()
		s.printerDone.Wait()
	}
}

func (s *shell) prompt() string {
	return fmt.Sprintf("[zk: %s(%s) %d] ", s.servers, promptState(s.conn), s.count)
}

// runLine runs one line typed or piped into the shell, keeping zkCli's
// history numbering: every non-blank line gets the next number.
func (s *shell) runLine(ctx context.Context, line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	words := splitLine(line)
	s.history[s.count] = line
	delete(s.history, s.count-historyKeep)
	if len(words) > 0 && words[0] == "redo" {
		redone, err := s.redo(words[1:])
		if err != nil {
			s.report(err)
			s.count++
			return
		}
		s.history[s.count] = redone
		words = splitLine(redone)
	}
	s.exec(ctx, words)
	s.count++
}

// redo finds the line redo's argument names.
func (s *shell) redo(args []string) (string, error) {
	if len(args) != 1 {
		return "", usagef("redo cmdno")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return "", usagef("redo cmdno")
	}
	line, ok := s.history[n]
	if n < 0 || n >= s.count || !ok {
		return "", usagef("Command index out of range")
	}
	if w := splitLine(line); len(w) > 0 && w[0] == "redo" {
		return "", usagef("No redoing redos")
	}
	return line, nil
}

// exec runs one command and sets s.status.
func (s *shell) exec(ctx context.Context, words []string) {
	if len(words) == 0 {
		return
	}
	cmd, ok := lookup(words[0])
	if !ok {
		s.writeUsage(s.cfg.Stderr)
		s.report(usagef("Command not found: " + words[0]))
		return
	}
	if cmd.name == "quit" {
		// zkCli's quit exits with the status of the command before it.
		s.quit = true
		return
	}
	o, err := parseOpts(words[1:], cmd.spec)
	if err == nil && (len(o.args) < cmd.min || cmd.max >= 0 && len(o.args) > cmd.max) {
		err = usagef(cmd.usageText())
	}
	if err != nil {
		s.report(err)
		return
	}
	cctx, cancel := s.commandContext(ctx)
	defer cancel()
	if cmd.conn && s.conn == nil {
		// One-shot mode connects only for commands that need it, so
		// that help and version work without a server.
		if s.printer != nil {
			s.report(&failure{"Not connected"})
			return
		}
		if !s.connect(cctx) {
			s.status = ExitFailed
			return
		}
	}
	var buf bytes.Buffer
	err = cmd.run(s, cctx, o, &buf)
	if s.printer != nil {
		s.printer.Flush()
	}
	s.out.Write(buf.Bytes())
	s.report(err)
}

// commandContext is ctx, also cancelled by an interrupt (Ctrl-C) that
// arrives while the command runs.
func (s *shell) commandContext(ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	if s.cfg.Interrupts == nil {
		return cctx, cancel
	}
	// An interrupt received while the shell was idle is not for this
	// command.
	for drained := false; !drained; {
		select {
		case <-s.cfg.Interrupts:
		default:
			drained = true
		}
	}
	go func() {
		select {
		case <-s.cfg.Interrupts:
			cancel()
		case <-cctx.Done():
		}
	}()
	return cctx, cancel
}

// report prints a command's error and records its status.
func (s *shell) report(err error) {
	s.status = exitStatus(err)
	if err == nil {
		return
	}
	if msg := err.Error(); msg != "" {
		if !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		io.WriteString(s.cfg.Stderr, msg)
	}
}

// connect opens a session to s.servers, waiting at most the session
// timeout. In the shell it announces itself and prints the session's
// events, as zkCli does.
func (s *shell) connect(ctx context.Context) bool {
	if s.printer != nil {
		fmt.Fprintf(s.out, "Connecting to %s\n", s.servers)
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	copts := []client.Option{client.SessionTimeout(s.timeout), client.Logger(s.cfg.Logger)}
	if s.tls != nil {
		copts = append(copts, client.TLS(s.tls))
	}
	c, err := client.Connect(cctx, []string{s.servers}, copts...)
	if err != nil {
		fmt.Fprintf(s.cfg.Stderr, "Unable to connect to %s: %v\n", s.servers, err)
		return false
	}
	s.conn = c
	if s.printer != nil {
		s.printer.Session(c.Events())
	}
	return true
}

// disconnect closes the session, if any.
func (s *shell) disconnect() {
	if s.conn == nil {
		return
	}
	s.conn.Close()
	s.conn = nil
	if s.printer != nil {
		s.printer.Flush()
	}
}

// watch hands a one-shot watch to the printer (none in one-shot mode,
// which ends before any event could come).
func (s *shell) watch(ch <-chan client.Event) {
	if s.printer != nil && ch != nil {
		s.printer.Watch(ch)
	}
}
