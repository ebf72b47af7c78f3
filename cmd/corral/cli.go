package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/corral-db/corral/cli"
	"golang.org/x/term"
)

// runCLI is `corral cli`, a zkCli-like shell (see package cli).
func runCLI(args []string) int {
	cfg := cli.Config{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		TerminalFd: -1,
		Version:    Version,
	}
	in, out := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	if term.IsTerminal(in) && term.IsTerminal(out) {
		cfg.Terminal = true
		cfg.TerminalFd = in
		// Ctrl-C interrupts the running command instead of the shell
		// (at the prompt the terminal is raw and Ctrl-C quits).
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		defer signal.Stop(sig)
		cfg.Interrupts = sig
	}
	return cli.Main(context.Background(), cfg, args)
}
