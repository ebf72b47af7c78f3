package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is a started server process. Its methods signal the PID it was
// started with, never a name.
type Process struct {
	// Name says what runs, for messages and the log's start line.
	Name string
	// Argv is the command line it was started with.
	Argv []string
	// LogPath is the file its stdout and stderr are appended to.
	LogPath string

	cmd  *exec.Cmd
	done chan struct{} // closed once the process is reaped
	err  error         // cmd.Wait's result; read only after done is closed

	mu     sync.Mutex
	paused bool // stopped by Pause and not resumed since
}

// Start runs argv in dir with its stdout and stderr appended to logPath,
// after a line saying what starts and when (so a restarted server
// continues the log of its earlier life). The process is SIGKILLed if the
// calling process dies first. A goroutine reaps it; Done is closed then.
func Start(name string, argv []string, dir, logPath string) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("proc: empty command line")
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "---- starting %s at %s ----\n", name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("proc: start %s: %w", name, err)
	}
	p := &Process{Name: name, Argv: argv, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is how the process ended (cmd.Wait's error); nil while it runs.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// State describes how the process ended ("" while it runs).
func (p *Process) State() string {
	if !p.Exited() || p.cmd.ProcessState == nil {
		return ""
	}
	return p.cmd.ProcessState.String()
}

// Signal sends sig to the process's PID; a process that has already
// exited is not an error.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	if err := syscall.Kill(p.PID(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("proc: kill -%d %d (%s): %w", sig, p.PID(), p.Name, err)
	}
	return nil
}

// Stop ends the process: SIGTERM (after SIGCONT if it is paused), then
// SIGKILL if it has not exited within timeout. It returns once the
// process is reaped; killed reports whether SIGKILL was needed.
func (p *Process) Stop(timeout time.Duration) (killed bool, err error) {
	if p.Exited() {
		return false, nil
	}
	if err := p.Resume(); err != nil {
		return false, err
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return false, nil
	case <-t.C:
	}
	_, err = p.Kill(timeout)
	return true, err
}

// Kill sends SIGKILL and waits up to timeout for the process to be
// reaped: a crash, with no chance to close connections or flush
// anything. It returns when the signal was sent.
func (p *Process) Kill(timeout time.Duration) (time.Time, error) {
	if p.Exited() {
		return time.Now(), nil
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return time.Time{}, err
	}
	at := time.Now()
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return at, nil
	case <-t.C:
		return at, fmt.Errorf("proc: %s (pid %d) not reaped %v after SIGKILL", p.Name, p.PID(), timeout)
	}
}

// Pause freezes the process with SIGSTOP.
func (p *Process) Pause() error {
	if p.Exited() {
		return fmt.Errorf("proc: pause %s (pid %d): not running", p.Name, p.PID())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.paused = true
	return nil
}

// Resume continues a paused process with SIGCONT; it does nothing to one
// that is not paused.
func (p *Process) Resume() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		return nil
	}
	if err := p.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	p.paused = false
	return nil
}

// Paused reports whether the process is paused.
func (p *Process) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused && !p.Exited()
}
