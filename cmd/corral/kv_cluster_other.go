//go:build !linux

package main

import "os/exec"

// setParentDeathSignal: only Linux has it; elsewhere a node outlives a
// killed parent.
func setParentDeathSignal(*exec.Cmd) {}
