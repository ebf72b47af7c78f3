package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Module is the module whose checkout holds cmd/corral and the scripts
// that fetch ZooKeeper's and Curator's jars.
const Module = "github.com/corral-db/corral"

// ModuleRoot walks up from dir to the directory whose go.mod declares
// Module.
func ModuleRoot(dir string) (string, error) {
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+Module)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("proc: no %s checkout above %s", Module, dir)
		}
		dir = parent
	}
}

// ScriptOutput runs the bash script at rel (slash-separated, relative to
// the module root root) in root and returns the last line it printed,
// which must not be empty: the fetch scripts print progress first and
// their result last.
func ScriptOutput(ctx context.Context, root, rel string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, filepath.FromSlash(rel)))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", rel, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return "", fmt.Errorf("%s printed nothing\n%s", rel, stderr.String())
	}
	return last, nil
}
