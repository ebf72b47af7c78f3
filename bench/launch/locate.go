package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/corral-db/corral/internal/proc"
)

// findModuleRoot walks up from dir to the checkout of corral.
func findModuleRoot(dir string) (string, error) {
	root, err := proc.ModuleRoot(dir)
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return root, nil
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
	lib, err = proc.ScriptOutput(ctx, root, "scripts/zookeeper/fetch.sh")
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return lib, nil
}
