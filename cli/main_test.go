package cli_test

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-db/corral/cli"
	"github.com/corral-db/corral/tests/harness"
)

// env is resolved once per test binary (the corral build or the ZooKeeper
// jars); the end-to-end tests start one server and share it, each under
// its own root node.
var env *harness.Env

func TestMain(m *testing.M) {
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// start launches a server for the test. Reading the target's variables
// inside the test keys go test's cache on them.
func start(t *testing.T) *harness.Server {
	t.Helper()
	_ = os.Getenv(harness.EnvTarget)
	_ = os.Getenv(harness.EnvCorralBin)
	return env.Start(t)
}

// result is what one run of the CLI printed and returned.
type result struct {
	out, err string
	code     int
}

// runCLI runs the CLI in process against addr: one-shot with args, or
// the shell reading stdin when args is empty.
func runCLI(t *testing.T, addr, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cfg := cli.Config{
		Stdin:      strings.NewReader(stdin),
		Stdout:     &out,
		Stderr:     &errb,
		TerminalFd: -1,
		Location:   time.UTC,
		Version:    "test",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := cli.Main(ctx, cfg, append([]string{"-server", addr, "-timeout", "10000"}, args...))
	return result{out.String(), errb.String(), code}
}

var (
	reZxid    = regexp.MustCompile(`(?m)^([cmp]Zxid) = 0x[0-9a-f]+$`)
	reTime    = regexp.MustCompile(`(?m)^([cm]time) = .*$`)
	reOwner   = regexp.MustCompile(`(?m)^ephemeralOwner = 0x[1-9a-f][0-9a-f]*$`)
	reEvZxid  = regexp.MustCompile(`zxid: [0-9]+`)
	reAddress = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
)

// normalize hides what differs from run to run and between servers
// (zxids, times, session ids, the port), keeping the format.
func normalize(s string) string {
	s = reZxid.ReplaceAllString(s, "$1 = 0xZ")
	s = reTime.ReplaceAllString(s, "$1 = T")
	s = reOwner.ReplaceAllString(s, "ephemeralOwner = 0xS")
	s = reEvZxid.ReplaceAllString(s, "zxid: Z")
	return reAddress.ReplaceAllString(s, "ADDR")
}

// stat is a normalized stat block with the given counters.
func stat(cversion, version, aversion int, owner string, dataLength, numChildren int) string {
	var b strings.Builder
	b.WriteString("cZxid = 0xZ\nctime = T\nmZxid = 0xZ\nmtime = T\npZxid = 0xZ\n")
	b.WriteString("cversion = " + strconv.Itoa(cversion) + "\ndataVersion = " + strconv.Itoa(version) +
		"\naclVersion = " + strconv.Itoa(aversion) + "\nephemeralOwner = " + owner +
		"\ndataLength = " + strconv.Itoa(dataLength) + "\nnumChildren = " + strconv.Itoa(numChildren) + "\n")
	return b.String()
}
