// Package command is the corral-bench command line: `corral-bench
// SUBCOMMAND [flags]` (also run as `corral bench ...`). It parses flags
// into the experiments' configurations (package bench), runs them, prints
// and stores their reports, and draws their figures (package plot).
package command
