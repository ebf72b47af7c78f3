package kv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/corral-db/corral/bench/launch"
)

// store is what a thread drives: one system's client, safe for
// concurrent use.
type store interface {
	// Read reads record key whole.
	Read(ctx context.Context, key string) error
	// Write overwrites record key with rec.
	Write(ctx context.Context, key string, rec [][]byte) error
	// Scan reads up to n records in key order from key.
	Scan(ctx context.Context, key string, n int) error
	Close() error
}

// Member is one launched server process.
type Member struct {
	Name    string
	Argv    []string
	Budget  string
	Addr    string         // client address
	srv     *launch.Server // nil for a node another member started
	pid     int            // when srv is nil
	logPath string
}

// Kill sends the member's process SIGKILL (a node another member
// started by its pid).
func (m *Member) Kill() error {
	if m.srv != nil {
		_, err := m.srv.Kill()
		return err
	}
	return syscall.Kill(m.pid, syscall.SIGKILL)
}

// Replace makes srv, logging to logPath, the member's process: a node
// restarted after a kill.
func (m *Member) Replace(srv *launch.Server, logPath string) {
	m.srv, m.pid, m.logPath = srv, srv.PID(), logPath
}

func (m *Member) PID() int {
	if m.srv == nil {
		return m.pid
	}
	return m.srv.PID()
}

// System is one launched replica group and its client.
type System struct {
	Name    string // "corral", "corral[coolest]", "etcd"
	Kind    string // "corral" or "etcd"
	Groups  int    // corral's replica groups (0: one, launched member by member)
	Version string
	Config  string // the config lines or flags the members share, for the report
	Members []*Member
	Client  store
	log     *slog.Logger
	// Policy, Durability and Routing are corral's settings of this run
	// ("" for etcd), for the report.
	Policy, Durability, Routing string
	// metrics are the members' Prometheus endpoints (host:port) the
	// compaction sampler reads; none for etcd and sharded clusters.
	metrics []string
}

// startMember runs argv (after its budget's wrapper) as member name,
// through launch.Spawn as every benchmark starts its servers, and adds
// it to the members.
func (s *System) startMember(name string, argv []string, bg budget, dir, logPath string) (*Member, error) {
	full := append(append([]string{}, bg.Wrapper...), argv...)
	srv, err := launch.Spawn(name, full, dir, logPath, s.log)
	if err != nil {
		return nil, err
	}
	if err := bg.join(srv.PID()); err != nil {
		srv.Kill()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m := &Member{Name: name, Argv: full, Budget: bg.Applied, srv: srv, logPath: logPath}
	s.Members = append(s.Members, m)
	return m, nil
}

// exited reports the first member that has exited, as an error.
func (s *System) exited() error {
	for _, m := range s.Members {
		if m.srv != nil && m.srv.Exited() {
			return fmt.Errorf("%s exited (%v); see %s", m.Name, m.srv.Err(), m.logPath)
		}
	}
	return nil
}

// Stop closes the client and stops every member by PID (launch logs a
// member that had to be killed).
func (s *System) Stop() {
	if s.Client != nil {
		s.Client.Close()
	}
	for _, m := range s.Members {
		if m.srv == nil {
			continue // stopped by the process that started it
		}
		if err := m.srv.Stop(); err != nil {
			s.log.Warn("member stop", "member", m.Name, "pid", m.PID(), "err", err)
		}
	}
}

// pids are the members' process ids.
func (s *System) pids() []int {
	out := make([]int, len(s.Members))
	for i, m := range s.Members {
		out[i] = m.PID()
	}
	return out
}

// waitReady retries ready every 200 ms until it succeeds, a member
// exits or timeout passes.
func (s *System) waitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if err := s.exited(); err != nil {
			return err
		}
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		last = ready(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v: %v", s.Name, timeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ready waits until ready succeeds (see waitReady), then notes the
// version the command versionArgv prints.
func (s *System) ready(ctx context.Context, timeout time.Duration, ready func(context.Context) error, versionArgv ...string) error {
	if err := s.waitReady(ctx, timeout, ready); err != nil {
		return err
	}
	if out, err := runOutput(ctx, versionArgv...); err == nil {
		s.Version = out
	}
	return nil
}

// ignoredKeys are the lines of member 1's log where the server said it
// ignored a zoo.cfg key (a -leader-policy or -server-opt it does not
// know), so the report can say the setting had no effect.
func (s *System) ignoredKeys() []string {
	if len(s.Members) == 0 {
		return nil
	}
	b, err := os.ReadFile(s.Members[0].logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		_, rest, ok := strings.Cut(line, "zoo.cfg: ")
		rest = strings.TrimSuffix(rest, "\"")
		if ok && strings.Contains(rest, "ignored") && !slices.Contains(out, rest) {
			out = append(out, rest)
		}
	}
	return out
}
