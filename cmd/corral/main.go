// Command corral is the single corral binary: the server, a local ensemble
// for trying it out, and the benchmark harness.
package main

import (
	"fmt"
	"os"
)

type command struct {
	name  string
	usage string
	run   func(args []string) int
}

func commands() []command {
	return []command{
		{"server", "server ZOO_CFG            run one server from a ZooKeeper zoo.cfg", runServer},
		{"ensemble", "ensemble [-n N] [-dir D] [-rlog-root P]  start a local ensemble on loopback and print the connect string (and the log API's endpoints)", runEnsemble},
		{"bench", "bench SUBCOMMAND ...        measure corral and Apache ZooKeeper side by side", runBench},
		{"kv", "kv COMMAND ...              the key-value store: ensemble, create-table, put, get, delete, scan", runKV},
		{"log", "log SUBCOMMAND -endpoints E NAME [...]  replicated logs: create, append, read, follow, trim, seal, stat, delete", runLog},
		{"cli", "cli [-server host:port[,...]] [CMD ARGS]  a zkCli-like shell", runCLI},
		{"console", "console -server host:port[,...] [-listen A] [-writable]  serve the web console", runConsole},
		{"import-zookeeper", "import-zookeeper -from ZK_DATADIR [-from-log DIR] -to DATADIR [-to-log DIR]  convert a ZooKeeper dataDir", runImportZooKeeper},
		{"export-zookeeper", "export-zookeeper -from DATADIR [-from-log DIR] -to ZK_DATADIR [-to-log DIR]  write a ZooKeeper dataDir", runExportZooKeeper},
		{"transfer-leader", "transfer-leader -admin HOST:PORT -to ID [-auth user:pw]  hand leadership to another voter", runTransferLeader},
		{"version", "version                    print the version", runVersion},
	}
}

func main() {
	os.Exit(dispatch(os.Args[1:]))
}

func dispatch(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:])
		}
	}
	fmt.Fprintf(os.Stderr, "corral: unknown command %q\n", args[0])
	usage()
	return 2
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: corral COMMAND [ARGS]")
	for _, c := range commands() {
		fmt.Fprintln(os.Stderr, "  corral "+c.usage)
	}
}

func runVersion(args []string) int {
	fmt.Println(Version)
	return 0
}
