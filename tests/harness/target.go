package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-db/corral/internal/proc"
)

// Kind names a server implementation the tests can drive.
type Kind string

const (
	Corral    Kind = "corral"
	ZooKeeper Kind = "zookeeper"
)

// Environment variables read by the harness.
const (
	// EnvTarget selects the server: "corral" (default) or "zookeeper".
	EnvTarget = "CORRAL_E2E_TARGET"
	// EnvCorralBin names a prebuilt corral binary; when unset the harness
	// builds ./cmd/corral once per test binary.
	EnvCorralBin = "CORRAL_BIN"
	// EnvCI, when set to anything but "" or "false", turns a missing
	// prerequisite (java, the jars, a corral that does not build) from a
	// skip into a failure.
	EnvCI = "CI"
)

// Env is what one test binary resolved about its target: which server, and
// how to launch it. A prerequisite that is missing is recorded in err and
// reported by every Start (skip locally, fail under CI).
type Env struct {
	Kind Kind
	// Root is the module root (the directory holding go.mod).
	Root string

	corralBin string // corral: the binary
	java      string // zookeeper: the java executable
	// zookeeper: the classpath (3.9.3 jars and their run-time extras)
	zkClasspath string
	err         error
	ci          bool // CI is set: a missing prerequisite fails
	typo        bool // the target name itself is wrong: always fails
}

// NewEnv resolves the target named by CORRAL_E2E_TARGET. For corral it
// builds the binary into a temporary directory (removed by the returned
// cleanup) unless CORRAL_BIN names one. Call it from TestMain: the build
// happens once per test binary, not once per test.
func NewEnv() (*Env, func()) {
	e := &Env{Kind: Kind(strings.TrimSpace(os.Getenv(EnvTarget)))}
	if e.Kind == "" {
		e.Kind = Corral
	}
	ci := os.Getenv(EnvCI)
	e.ci = ci != "" && ci != "false" && ci != "0"
	cleanup := func() {}

	root, err := moduleRoot()
	if err != nil {
		e.err = err
		return e, cleanup
	}
	e.Root = root

	switch e.Kind {
	case Corral:
		if bin := os.Getenv(EnvCorralBin); bin != "" {
			if _, err := os.Stat(bin); err != nil {
				e.err = fmt.Errorf("%s=%s: %w", EnvCorralBin, bin, err)
			}
			e.corralBin = bin
			return e, cleanup
		}
		dir, err := os.MkdirTemp("", "corral-e2e-bin-")
		if err != nil {
			e.err = err
			return e, cleanup
		}
		cleanup = func() { os.RemoveAll(dir) }
		bin := filepath.Join(dir, "corral")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/corral")
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			e.err = fmt.Errorf("go build ./cmd/corral: %v\n%s", err, out.String())
			return e, cleanup
		}
		e.corralBin = bin
	case ZooKeeper:
		java, err := exec.LookPath("java")
		if err != nil {
			e.err = fmt.Errorf("java not found: %w", err)
			return e, cleanup
		}
		e.java = java
		e.zkClasspath, e.err = zookeeperClasspath(root)
	default:
		e.err = fmt.Errorf("%s=%q: want %q or %q", EnvTarget, e.Kind, Corral, ZooKeeper)
		// An unknown target is a typo, never a missing prerequisite.
		e.typo = true
	}
	return e, cleanup
}

// Require stops the test when the target cannot run: a skip on a
// developer's machine, a failure under CI.
func (e *Env) Require(t testing.TB) {
	t.Helper()
	if e == nil {
		t.Fatal("harness: nil Env (is TestMain calling harness.NewEnv?)")
	}
	if e.err == nil {
		return
	}
	if e.typo {
		t.Fatalf("e2e target: %v", e.err)
	}
	if e.ci {
		t.Fatalf("e2e target %s unavailable (CI is set, so this fails): %v", e.Kind, e.err)
	}
	t.Skipf("e2e target %s unavailable: %v", e.Kind, e.err)
}

// IsZooKeeper reports whether the reference server is the target.
func (e *Env) IsZooKeeper() bool { return e.Kind == ZooKeeper }

// zookeeperClasspath runs tests/zookeeper-classpath.sh, which runs
// scripts/zookeeper/fetch.sh and adds the jars ZooKeeper needs at run time
// but its pom marks "provided", and returns the classpath it prints.
func zookeeperClasspath(root string) (string, error) {
	return scriptOutput(root, "tests/zookeeper-classpath.sh")
}

// scriptOutput runs the bash script at rel under the module root root
// and returns the last line it printed (see proc.ScriptOutput).
func scriptOutput(root, rel string) (string, error) {
	return proc.ScriptOutput(context.Background(), root, rel)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return proc.ModuleRoot(dir)
}
