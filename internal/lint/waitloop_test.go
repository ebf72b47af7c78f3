package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// waitLoopAllowed lists the test files (or directories, ending in "/")
// that may keep a hand-rolled wait loop, each with the reason.
var waitLoopAllowed = map[string]string{
	// pending: a long simulator run works on this package; its waits
	// move to testutil.Eventually once it is done.
	"sim/":                      "pending",
	"snap/direct_bench_test.go": "paces a benchmark's writes to a rate; it waits for no condition",
	// Within is the one loop every other wait goes through.
	"internal/testutil/wait.go": "the implementation of Eventually",
}

// waitLoops reports the loops in a Go file that sleep and watch the
// clock: a hand-rolled Eventually. A loop whose select polls with
// time.After and fails the test in another case (at a context's or a
// timer's end) is one too. A load loop bounded in time that does not
// sleep, and a loop that paces itself without looking at the clock, are
// not waits and are not reported.
func waitLoops(fset *token.FileSet, f *ast.File) []token.Position {
	var found []token.Position
	ast.Inspect(f, func(n ast.Node) bool {
		var parts []ast.Node
		switch l := n.(type) {
		case *ast.ForStmt:
			parts = []ast.Node{l.Cond, l.Post, l.Body}
		case *ast.RangeStmt:
			parts = []ast.Node{l.X, l.Body}
		default:
			return true
		}
		sleeps, clock := false, false
		for _, p := range parts {
			if p == nil {
				continue
			}
			ast.Inspect(p, func(m ast.Node) bool {
				switch m := m.(type) {
				case *ast.FuncLit:
					return false // a goroutine or callback: not this loop's wait
				case *ast.ForStmt, *ast.RangeStmt:
					return false // an inner loop is judged on its own
				case *ast.SelectStmt:
					if pollsUntilFatal(m) {
						sleeps, clock = true, true
					}
				case *ast.CallExpr:
					switch {
					case isCall(m, "time", "Sleep"):
						sleeps = true
					case isCall(m, "time", "Since"), isCall(m, "time", "Until"):
						clock = true
					case isNowMethod(m, "Before"), isNowMethod(m, "After"):
						clock = true
					}
				}
				return true
			})
		}
		if sleeps && clock {
			found = append(found, fset.Position(n.Pos()))
		}
		return true
	})
	return found
}

// pollsUntilFatal reports whether a select has a case receiving from
// time.After that lets the loop go round (a poll interval) and another
// case that fails the test (t.Fatal or t.Fatalf: the deadline). A
// time.After case that itself fails the test is a timeout, not a poll.
func pollsUntilFatal(s *ast.SelectStmt) bool {
	poll, fatal := false, false
	for _, c := range s.Body.List {
		cc := c.(*ast.CommClause)
		fails := callsFatal(cc.Body)
		if isTimeAfterRecv(cc.Comm) && !fails {
			poll = true
		} else if fails {
			fatal = true
		}
	}
	return poll && fatal
}

// isTimeAfterRecv reports whether a select case is <-time.After(d).
func isTimeAfterRecv(comm ast.Stmt) bool {
	e, ok := comm.(*ast.ExprStmt)
	if !ok {
		return false
	}
	u, ok := e.X.(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW {
		return false
	}
	call, ok := u.X.(*ast.CallExpr)
	return ok && isCall(call, "time", "After")
}

// callsFatal reports whether stmts call a Fatal or Fatalf method.
func callsFatal(stmts []ast.Stmt) bool {
	found := false
	for _, st := range stmts {
		ast.Inspect(st, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Fatal" || sel.Sel.Name == "Fatalf") {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// isCall reports whether c calls pkg.name.
func isCall(c *ast.CallExpr, pkg, name string) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

// isNowMethod reports whether c is time.Now().method(...).
func isNowMethod(c *ast.CallExpr, method string) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != method {
		return false
	}
	now, ok := sel.X.(*ast.CallExpr)
	return ok && isCall(now, "time", "Now")
}

func waitLoopAllowedFor(file string) (string, bool) {
	for p, why := range waitLoopAllowed {
		if file == p || strings.HasSuffix(p, "/") && strings.HasPrefix(file, p) {
			return why, true
		}
	}
	return "", false
}

// TestNoHandRolledWaits: tests wait for a condition with
// testutil.Eventually (or EventuallyNoError, Within), not with a loop of
// their own around time.Sleep and a deadline.
func TestNoHandRolledWaits(t *testing.T) {
	dir := root(t)
	fset := token.NewFileSet()
	for _, file := range trackedFiles(t, dir, "*_test.go") {
		if _, ok := waitLoopAllowedFor(file); ok {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			continue // deleted in the work tree
		}
		f, err := parser.ParseFile(fset, file, src, 0)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for _, pos := range waitLoops(fset, f) {
			t.Errorf("%s: a loop that polls until a deadline: use testutil.Eventually", pos)
		}
	}
}

func TestWaitLoopRuleCatches(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"deadline loop", `deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if ok() { return }
		time.Sleep(time.Millisecond)
	}`, 1},
		{"deadline checked inside", `deadline := time.Now().Add(time.Second)
	for !ok() {
		if time.Now().After(deadline) { panic("late") }
		time.Sleep(time.Millisecond)
	}`, 1},
		{"time.Since", `start := time.Now()
	for i := 0; time.Since(start) < time.Second; i++ { time.Sleep(time.Millisecond) }`, 1},
		{"load loop without sleep", `deadline := time.Now().Add(time.Second)
	for n := 0; n < 10 && time.Now().Before(deadline); n++ { ok() }`, 0},
		{"paced loop without clock", `for range 10 { ok(); time.Sleep(time.Millisecond) }`, 0},
		{"outer loop of a wait loop", `for range 3 {
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) { time.Sleep(1) }
	}`, 1},
		{"sleep in a goroutine", `deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) { go func() { time.Sleep(1) }() }`, 0},
		{"select polling until the context ends", `for !ok() {
		select {
		case <-ctx.Done():
			t.Fatal("late")
		case <-time.After(time.Millisecond):
		}
	}`, 1},
		{"select pacing a load until stopped", `for ok() {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
		}
	}`, 0},
		{"select receiving in order, each within a timeout", `for range 3 {
		select {
		case <-got:
		case <-time.After(time.Second):
			t.Fatal("late")
		}
	}`, 0},
		{"select awaiting an event, failing at a deadline", `for !ok() {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("late")
		}
	}`, 0},
	} {
		src := "package p\nimport \"time\"\nfunc ok() bool { return true }\nfunc f() {\n\t" + c.body + "\n}\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "p_test.go", src, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := len(waitLoops(fset, f)); got != c.want {
			t.Errorf("%s: %d loops reported, want %d", c.name, got, c.want)
		}
	}
	if why, ok := waitLoopAllowedFor("sim/x_test.go"); !ok || why != "pending" {
		t.Errorf("sim/ allowed %v (%q), want pending", ok, why)
	}
	if _, ok := waitLoopAllowedFor("simx/x_test.go"); ok {
		t.Error("simx/ allowed by the sim/ entry")
	}
}
