package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/corral-db/corral"

// staticcheckVersion is the staticcheck `go run` fetches with -staticcheck.
const staticcheckVersion = "honnef.co/go/tools/cmd/staticcheck@v0.8.2"

var runStaticcheck = flag.Bool("staticcheck", false, "also run staticcheck (fetched with go run; takes minutes)")

// root is the module's root directory.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("not in a module")
	}
	return filepath.Dir(gomod)
}

// pkg is what the import rules need of `go list -json`.
type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
	Deps                               []string
}

func listPackages(t *testing.T, dir string, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rel is a package's path inside the module ("" for the module itself).
func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// under reports whether package path p (inside the module) is dir or below it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// belowServer are the layers the server is built on, and the services
// beside it: none of them may import server.
var belowServer = []string{
	"zab", "replica", "sim", "datatree", "wal", "snap", "vfs", "txn", "wire",
	"config", "transport", "client", "kv", "rlog", "api",
}

// importRule says what a package of the module must not import.
type importRule struct {
	name string
	// forbidden reports whether importer may not import imported (imported
	// is a full import path; importer is inside the module).
	forbidden func(importer, imported string) bool
}

var importRules = []importRule{
	{"nothing below server imports server", func(importer, imported string) bool {
		r, ok := rel(imported)
		if !ok || !under(r, "server") {
			return false
		}
		return slices.ContainsFunc(belowServer, func(d string) bool { return under(importer, d) })
	}},
	{"zab imports nothing of corral", func(importer, imported string) bool {
		_, ours := rel(imported)
		return under(importer, "zab") && ours && !strings.HasPrefix(imported, module+"/zab")
	}},
	{"only bench/plot imports gonum", func(importer, imported string) bool {
		return strings.HasPrefix(imported, "gonum.org/") && !under(importer, "bench/plot")
	}},
}

// violations applies the import rules to pkgs.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		importer, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		imports := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
		slices.Sort(imports)
		for _, imp := range slices.Compact(imports) {
			for _, r := range importRules {
				if r.forbidden(importer, imp) {
					out = append(out, r.name+": "+p.ImportPath+" imports "+imp)
				}
			}
		}
	}
	return out
}

func TestImports(t *testing.T) {
	for _, v := range violations(listPackages(t, root(t), "./...")) {
		t.Error(v)
	}
}

// TestServerBinaryLinksNoPlotting: the server binary links none of the
// benchmark's plotting (cmd/corral-bench does).
func TestServerBinaryLinksNoPlotting(t *testing.T) {
	for _, p := range listPackages(t, root(t), "-deps", "./cmd/corral") {
		if strings.HasPrefix(p.ImportPath, "gonum.org/") || strings.HasPrefix(p.ImportPath, module+"/bench") {
			t.Errorf("cmd/corral links %s", p.ImportPath)
		}
	}
}

// TestImportRulesCatch checks the rules on made-up packages, so that a
// rule that matches nothing cannot pass unnoticed.
func TestImportRulesCatch(t *testing.T) {
	pkgs := []pkg{
		{ImportPath: module + "/replica", Imports: []string{module + "/server"}},
		{ImportPath: module + "/zab", TestImports: []string{module + "/wire"}},
		{ImportPath: module + "/bench", Imports: []string{"gonum.org/v1/plot"}},
		{ImportPath: module + "/bench/plot", Imports: []string{"gonum.org/v1/plot", module + "/bench"}},
		{ImportPath: module + "/cmd/corral", Imports: []string{module + "/server"}},
		{ImportPath: module + "/zab/quorum", Imports: []string{module + "/zab"}},
	}
	got := violations(pkgs)
	want := []string{
		"nothing below server imports server: " + module + "/replica imports " + module + "/server",
		"zab imports nothing of corral: " + module + "/zab imports " + module + "/wire",
		"only bench/plot imports gonum: " + module + "/bench imports gonum.org/v1/plot",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// trackedFiles lists the files git tracks under dir.
func trackedFiles(t *testing.T, dir string, patterns ...string) []string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"ls-files", "-z", "--"}, patterns...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout?)", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

func TestGofmt(t *testing.T) {
	dir := root(t)
	var files []string
	for _, f := range trackedFiles(t, dir, "*.go") {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			files = append(files, f) // tracked and not deleted in the work tree
		}
	}
	if len(files) == 0 {
		t.Fatal("no Go files tracked")
	}
	cmd := exec.Command("gofmt", append([]string{"-l"}, files...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gofmt: %v\n%s", err, out)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("gofmt -w needed:\n%s", out)
	}
}

func TestVet(t *testing.T) {
	if testing.Short() {
		t.Skip("go vet ./... skipped in -short")
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go vet: %v\n%s", err, out)
	}
}

func TestStaticcheck(t *testing.T) {
	if !*runStaticcheck {
		t.Skip("staticcheck runs with -staticcheck (it is fetched with go run and takes minutes)")
	}
	cmd := exec.Command("go", "run", staticcheckVersion, "./...")
	cmd.Dir = root(t)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && bytes.Contains(out, []byte("): ")):
		t.Errorf("staticcheck:\n%s", out)
	default:
		t.Skipf("staticcheck could not run (%v):\n%s", err, out)
	}
}

// machinePath matches a directory of a build machine: the checkouts and
// shared files of the machine the project is built on, root's home or a
// user's home. The pattern is assembled so that this file
// does not match it.
var machinePath = regexp.MustCompile(`/` + `work/(main|wt|shared)\b|(^|[\s'"(=:` + "`" + `])/` + `root/|/` + `home/[a-z_][a-z0-9_-]*/`)

func TestNoMachinePaths(t *testing.T) {
	dir := root(t)
	for _, f := range trackedFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted in the work tree
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			if machinePath.MatchString(line) {
				t.Errorf("%s:%d names a machine's directory: %.120s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

func TestMachinePathPattern(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"git clone /" + "work/main DIR", true},
		{"see /" + "work/shared/DESIGN.md", true},
		{"cd /" + "root/go/src", true},
		{"`/" + "root/.cache`", true},
		{"/" + "home/alice/corral", true},
		{"../shared/DESIGN.md", false},
		{`c.Create(ctx, "/app/root/x")`, false},
		{"/homepage/x", false},
		{"bin/corral server /tmp/zoo.cfg", false},
	} {
		if got := machinePath.MatchString(c.line); got != c.want {
			t.Errorf("%q: match %v, want %v", c.line, got, c.want)
		}
	}
}
