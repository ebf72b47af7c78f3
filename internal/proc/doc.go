// Package proc is the one way tests and benchmarks start and stop a
// server process, corral or Apache ZooKeeper: Start runs a command with
// its output appended to a log file, and Process stops it by its PID
// (SIGTERM, then SIGKILL), kills, pauses and resumes it. FourLetter and
// SrvrMode ask a server what it is doing, WaitUntil polls a readiness
// condition while watching the process, and ZooKeeperArgv and
// WriteLogback are the command line and logging configuration ZooKeeper
// runs with.
//
// tests/harness (which fails tests) and bench/launch (which returns
// errors) build their servers and ensembles on it.
package proc
