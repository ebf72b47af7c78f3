package main

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel kill cmd if this process dies
// without stopping it.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
