package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// modulePath is the module whose checkout holds cmd/corral and the
// ZooKeeper fetch script.
const modulePath = "github.com/corral-db/corral"

// findModuleRoot walks up from dir to the directory whose go.mod declares
// modulePath.
func findModuleRoot(dir string) (string, error) {
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+modulePath)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("bench: no %s checkout above the working directory", modulePath)
		}
		dir = parent
	}
}

// BuildCorral builds ./cmd/corral from the checkout above the working
// directory into dir/bin and returns the binary's path. Not dir/corral:
// that is where compare puts the corral target's server directory.
func BuildCorral(ctx context.Context, dir string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := findModuleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("%w (pass --corral-bin)", err)
	}
	out := filepath.Join(dir, "bin", "corral")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/corral")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: go build ./cmd/corral: %w\n%s", err, b)
	}
	return out, nil
}

// ZookeeperLib returns the directory of ZooKeeper 3.9.3's jars, fetching
// them with scripts/zookeeper/fetch.sh if needed.
func ZookeeperLib(ctx context.Context) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := findModuleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("%w (pass --zk-lib)", err)
	}
	lib := filepath.Join(root, ".cache", "zookeeper", "lib")
	if _, err := os.Stat(filepath.Join(lib, ".complete")); err == nil {
		return lib, nil
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "zookeeper", "fetch.sh"))
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("bench: scripts/zookeeper/fetch.sh: %w", err)
	}
	out := strings.TrimSpace(string(b))
	if out == "" {
		return "", errors.New("bench: scripts/zookeeper/fetch.sh printed no directory")
	}
	lines := strings.Split(out, "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}
