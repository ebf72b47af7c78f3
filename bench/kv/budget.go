package kv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// A member's CPU budget models a machine of its own: GOMAXPROCS=1 always
// (corral and etcd are both Go), and a cap on the CPU it may use, the
// first of these that works here:
//
//   - cgroup v2: a child cgroup of this process's own with
//     cpu.max = "<quota> 100000" (--cpu-quota cores), the member's PID
//     moved into it after start;
//   - taskset: the member pinned to one CPU, members spread over the
//     machine's CPUs in turn (several share a CPU when there are fewer
//     CPUs than members);
//   - none: only GOMAXPROCS=1.
//
// What was applied is reported per member.

// cgroupRoot is where cgroup v2 is mounted.
const cgroupRoot = "/sys/fs/cgroup"

// budget places one member under its CPU cap.
type budget struct {
	// Wrapper prefixes the member's command line (env, taskset).
	Wrapper []string
	// Cgroup is the cgroup directory the PID must join after start; "".
	Cgroup string
	// Applied says what was applied, for the report.
	Applied string
}

// budgeter hands out budgets to the members of one run.
type budgeter struct {
	enabled bool
	quota   float64 // cores per member (cgroup v2)
	mode    string  // "cgroup", "taskset" or "none"
	parent  string  // cgroup v2 directory members' cgroups go under
	next    int     // next CPU for taskset
	made    []string
}

// newBudgeter detects what this machine allows; taskset false skips
// pinning. Disabled, it sets nothing at all (no GOMAXPROCS either).
func newBudgeter(enabled bool, quota float64, taskset bool, tag string) *budgeter {
	b := &budgeter{enabled: enabled, quota: quota, mode: "none"}
	if !enabled {
		return b
	}
	if p, err := cgroupParent(tag); err == nil {
		b.mode, b.parent = "cgroup", p
		return b
	}
	if _, err := exec.LookPath("taskset"); err == nil && taskset {
		b.mode = "taskset"
	}
	return b
}

// cgroupParent makes a cgroup v2 directory under this process's own
// cgroup in which children can have cpu.max, or fails.
func cgroupParent(tag string) (string, error) {
	ctrl, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers"))
	if err != nil || !hasWord(string(ctrl), "cpu") {
		return "", errors.New("no cgroup v2 cpu controller")
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var rel string
	for _, line := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return "", errors.New("not in a cgroup v2 hierarchy")
	}
	parent := filepath.Join(cgroupRoot, rel, tag)
	if err := os.Mkdir(parent, 0o755); err != nil {
		return "", err
	}
	// The new directory holds no process, so it may delegate cpu.
	if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
		os.Remove(parent)
		return "", err
	}
	return parent, nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// assign returns member name's budget.
func (b *budgeter) assign(name string) (budget, error) {
	if !b.enabled {
		return budget{Applied: "none (--cpu-budget=false)"}, nil
	}
	bg := budget{Wrapper: []string{"env", "GOMAXPROCS=1"}, Applied: "GOMAXPROCS=1"}
	switch b.mode {
	case "cgroup":
		dir := filepath.Join(b.parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return bg, fmt.Errorf("cgroup for %s: %w", name, err)
		}
		b.made = append(b.made, dir)
		max := strconv.Itoa(int(b.quota*100000)) + " 100000"
		if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(max), 0o644); err != nil {
			return bg, fmt.Errorf("cgroup for %s: %w", name, err)
		}
		bg.Cgroup = dir
		bg.Applied += ", cgroup v2 cpu.max " + max
	case "taskset":
		cpu := b.next % runtime.NumCPU()
		b.next++
		bg.Wrapper = append([]string{"taskset", "-c", strconv.Itoa(cpu)}, bg.Wrapper...)
		bg.Applied += ", taskset -c " + strconv.Itoa(cpu)
	}
	return bg, nil
}

// join moves pid into bg's cgroup, if it has one.
func (bg budget) join(pid int) error {
	if bg.Cgroup == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(bg.Cgroup, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// cleanup removes the cgroups made (their processes must have exited).
func (b *budgeter) cleanup() {
	for i := len(b.made) - 1; i >= 0; i-- {
		os.Remove(b.made[i])
	}
	b.made = nil
	if b.parent != "" {
		os.Remove(b.parent)
	}
}
