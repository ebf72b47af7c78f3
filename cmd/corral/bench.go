package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// benchBinary is the benchmark's own binary; it links the statistics and
// plotting this server binary must not.
const benchBinary = "corral-bench"

// runBench runs `corral bench ARGS` as `corral-bench ARGS`, found beside
// this binary or on PATH, telling it to measure this binary as the corral
// server under test.
func runBench(args []string) int {
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	bin, err := findBench(self)
	if err != nil {
		fmt.Fprintf(os.Stderr, "corral bench: %v\n", err)
		return 2
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	if self != "" {
		cmd.Env = append(cmd.Env, "CORRAL_BENCH_SERVER_BIN="+self)
	}
	// Forward interrupts: the benchmark stops its servers and writes what it
	// has. Its exit status is ours.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "corral bench: %v\n", err)
		return 2
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() >= 0 {
			return exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "corral bench: %v\n", err)
		return 1
	}
	return 0
}

// findBench looks for corral-bench beside self, then on PATH.
func findBench(self string) (string, error) {
	if self != "" {
		p := filepath.Join(filepath.Dir(self), benchBinary)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(benchBinary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the benchmark is its own binary, %s, and none was found beside %s or on PATH; build both with `make build` (or `go build -o bin/%s ./cmd/%s`)", benchBinary, self, benchBinary, benchBinary)
}
