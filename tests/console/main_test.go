package console

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-db/corral/console"
	"github.com/corral-db/corral/internal/testutil"
	"github.com/corral-db/corral/tests/harness"
)

var env *harness.Env

var (
	screenshots = flag.String("console.screenshots", "", "write a 1280x800 PNG of each view into this directory")
	long        = flag.Bool("console.long", false, "browse a node with 100,000 children (default: 2,000)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	var cleanup func()
	env, cleanup = harness.NewEnv()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// chromiumPath is Debian's chromium, installed by scripts/chromium.sh.
const chromiumPath = "/usr/bin/chromium"

func ciSet() bool {
	ci := os.Getenv(harness.EnvCI)
	return ci != "" && ci != "false" && ci != "0"
}

// requireTool skips (fails under CI) when a prerequisite is missing.
func requireTool(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if ciSet() {
		t.Fatalf("%v (CI is set, so this fails)", err)
	}
	t.Skipf("%v; skipping", err)
}

// Bounds on waits for things that must happen eventually; nothing asserts
// on how long they took.
const (
	pageWait     = 20 * time.Second // the page shows what it was asked
	failoverWait = 45 * time.Second // a new leader is elected and shown
)

// newBrowser starts headless chromium with a fresh profile and returns a
// tab context; the browser is killed when the test ends.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		requireTool(t, fmt.Errorf("%s not found (run scripts/chromium.sh)", chromiumPath))
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// serveConsole mounts the console at /console/ of a test HTTP server, as
// the admin server does, and returns the page's URL.
func serveConsole(t *testing.T, cfg console.Config) (string, *console.Console) {
	t.Helper()
	c, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", c))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		c.Close()
	})
	return srv.URL + "/console", c
}

// run runs browser actions, bounded by pageWait.
func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, pageWait)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// js runs an expression in the page for its effect, waiting for it if it
// is a promise.
func js(t *testing.T, ctx context.Context, stmt string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, pageWait)
	defer cancel()
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[bool]("Promise.resolve("+stmt+").then(() => true)", chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("browser: %s: %v", stmt, err)
	}
}

// waitJS polls a JavaScript expression until it is true, within limit.
func waitJS(t *testing.T, ctx context.Context, limit time.Duration, what, expr string) {
	t.Helper()
	var err error
	if !testutil.Within(limit, func() bool {
		tctx, cancel := context.WithTimeout(ctx, pageWait)
		defer cancel()
		var ok bool
		ok, err = chromedp.Run(tctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		return err == nil && ok
	}) {
		banner, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#error").hidden ? "" : document.querySelector("#error").textContent`))
		t.Fatalf("%s: not shown within %s (last error %v; page error banner %q)", what, limit, err, strings.TrimSpace(banner))
	}
}

// evalString evaluates expr in the page and returns it as a string.
func evalString(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, pageWait)
	defer cancel()
	s, err := chromedp.Run(tctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("browser: %s: %v", expr, err)
	}
	return s
}

// shot saves the viewport as docs/console/<name>.png-style file in the
// -console.screenshots directory, if set.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	run(t, ctx, chromedp.Sleep(300*time.Millisecond))
	tctx, cancel := context.WithTimeout(ctx, pageWait)
	defer cancel()
	buf, err := chromedp.Run(tctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(*screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// needKazoo checks up front that the project's venv has kazoo, so that a
// machine without it fails (under CI) or skips with the reason at once,
// instead of a later step timing out on a page a failed step left open.
func needKazoo(t *testing.T) {
	t.Helper()
	py := filepath.Join(env.Root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		requireTool(t, errors.New("no .venv with kazoo (run make deps)"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, py, "-c", "import kazoo").CombinedOutput(); err != nil {
		requireTool(t, fmt.Errorf("the .venv has no kazoo (run make deps): %v: %s", err, strings.TrimSpace(string(out))))
	}
}

// kazoo runs tests/console/kazoo_check.py with the project's venv and
// returns its output; a missing venv skips (fails under CI).
func kazoo(t *testing.T, hosts string, args ...string) string {
	t.Helper()
	py := filepath.Join(env.Root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		requireTool(t, errors.New("no .venv with kazoo (run scripts/python-venv.sh)"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{"kazoo_check.py", hosts}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kazoo_check.py %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
