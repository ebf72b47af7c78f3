package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corral-db/corral/internal/testport"
	"github.com/corral-db/corral/tests/harness"
)

// startService runs the corral binary with args (a long-running service)
// and returns the address it prints after prefix ("kv endpoints: ",
// "api endpoints: "). It is stopped, by its PID, when the test ends.
func startService(t *testing.T, prefix string, args ...string) string {
	t.Helper()
	cmd := exec.Command(env.CorralBin(), args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("corral %s: %v", strings.Join(args, " "), err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				addr <- strings.TrimSpace(a)
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(pageWait):
		t.Fatalf("corral %s printed no %q within %s; stderr:\n%s", strings.Join(args, " "), prefix, pageWait, stderr.String())
		return ""
	}
}

// corralCLI runs a corral command to its end with stdin and returns its
// standard output.
func corralCLI(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pageWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.CorralBin(), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("corral %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// TestConsoleKVAndLogs starts a one-member key-value group and an
// unreplicated logs member as processes, writes a row and log appends
// with the CLI, and sees them on the Key-value and Logs pages of a
// corral server's AdminServer configured with admin.console.kvEndpoints
// and admin.console.logEndpoints.
func TestConsoleKVAndLogs(t *testing.T) {
	if env.IsZooKeeper() {
		t.Skip("the console is corral's")
	}
	env.Require(t)
	ctx := newBrowser(t)
	kvAddr := startService(t, "kv endpoints: ", "kv", "ensemble", "-n", "1", "-dir", filepath.Join(t.TempDir(), "kv"))
	logAddr := startService(t, "api endpoints: ", "log", "serve-local", "-dir", filepath.Join(t.TempDir(), "logs"))

	corralCLI(t, "", "kv", "create-table", "-endpoints", kvAddr, "users", "info", "prefs")
	for _, u := range []string{"alice", "bob", "carol"} {
		corralCLI(t, "", "kv", "put", "-endpoints", kvAddr, "users", u, "info:email="+u+"@example.org", "prefs:theme=dark")
	}
	corralCLI(t, "", "log", "create", "-endpoints", logAddr, "events")
	corralCLI(t, "first event\nsecond event\n", "log", "append", "-endpoints", logAddr, "-lines", "events")

	adminPort := testport.Free(t)
	env.StartWith(t, harness.Config{Extra: []string{
		"admin.enableServer=true", "admin.serverAddress=127.0.0.1",
		"admin.serverPort=" + strconv.Itoa(adminPort),
		"admin.console.kvEndpoints=" + kvAddr,
		"admin.console.logEndpoints=" + logAddr,
	}})
	url := fmt.Sprintf("http://127.0.0.1:%d/console", adminPort)

	t.Run("kv", func(t *testing.T) {
		run(t, ctx, chromedp.Navigate(url+"/#kv"))
		waitJS(t, ctx, pageWait, "page ready", `document.body.dataset.ready === "1"`)
		waitJS(t, ctx, pageWait, "the member as leader",
			`document.querySelector('#kv-members .card[data-addr="`+kvAddr+`"] [data-role="leader"]')`)
		waitJS(t, ctx, pageWait, "the table and its families",
			`(document.querySelector('#kv-tables tr[data-table="users"]') || {}).textContent === "usersinfo (1), prefs (1)Scan"`)
		js(t, ctx, `(document.querySelector("#kv-row").value = "bob", kvRead("get"))`)
		waitJS(t, ctx, pageWait, "bob's row", `document.querySelector('#kv-result tr[data-row="bob"]') &&
			document.querySelector("#kv-result tbody").textContent.includes("bob@example.org")`)
		js(t, ctx, `(document.querySelector("#kv-row").value = "", document.querySelector("#kv-limit").value = "2", kvRead("scan"))`)
		waitJS(t, ctx, pageWait, "a scan of two rows", `document.querySelector("#kv-result-head").textContent.includes("2 rows (more follow)") &&
			[...document.querySelectorAll("#kv-result tbody tr")].map((r) => r.dataset.row).join() === "alice,alice,bob,bob"`)
		js(t, ctx, `(document.querySelector("#kv-row").value = "dave", kvRead("get"))`)
		waitJS(t, ctx, pageWait, "a missing row", `document.querySelector("#kv-result-head").textContent.endsWith("not found")`)
		js(t, ctx, `(document.querySelector("#kv-limit").value = "20", document.querySelector("#kv-row").value = "", kvRead("scan"))`)
		waitJS(t, ctx, pageWait, "the full scan", `document.querySelector("#kv-result-head").textContent.includes("3 rows")`)
		shot(t, ctx, "kv")
	})

	t.Run("logs", func(t *testing.T) {
		run(t, ctx, chromedp.Navigate(url+"/#logs:events"))
		waitJS(t, ctx, pageWait, "page ready", `document.body.dataset.ready === "1"`)
		// start, committed, end, size, state
		cells := `[...(document.querySelector('#logs-table tr[data-log="events"]') || {cells: []}).cells].slice(1, 6).map((c) => c.textContent).join("|")`
		waitJS(t, ctx, pageWait, "the log's positions", cells+` === "0|25|25|25 B|open"`)
		waitJS(t, ctx, pageWait, "the tail", `document.querySelector("#tail-view").textContent === "first event\nsecond event\n"`)
		// The tail refreshes while open: an append shows up.
		corralCLI(t, "third event\n", "log", "append", "-endpoints", logAddr, "events")
		waitJS(t, ctx, pageWait, "the new append", `document.querySelector("#tail-view").textContent.endsWith("second event\nthird event\n")`)
		js(t, ctx, `document.querySelector('#tail-modes button[data-mode="hex"]').click()`)
		waitJS(t, ctx, pageWait, "the hex view", `document.querySelector("#tail-view").textContent.startsWith("00000000  66 69 72 73")`)
		js(t, ctx, `(document.querySelector("#logs-name").value = "nosuchlog", document.querySelector("#logs-add").requestSubmit())`)
		waitJS(t, ctx, pageWait, "a missing log", `(document.querySelector('#logs-table tr[data-log="nosuchlog"]') || {}).textContent?.includes("NOTFOUND")`)
		run(t, ctx, chromedp.Navigate(url+"/#logs:events"))
		js(t, ctx, `document.querySelector('#tail-modes button[data-mode="text"]').click()`)
		waitJS(t, ctx, pageWait, "the tail again", `document.querySelector("#tail-view").textContent.includes("third event")`)
		shot(t, ctx, "logs")
	})
}
