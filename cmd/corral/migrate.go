package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/corral-db/corral/migrate"
)

// runImportZooKeeper is `corral import-zookeeper`.
func runImportZooKeeper(args []string) int {
	return runMigrate("import-zookeeper", args, os.Stdout, os.Stderr, migrate.Import,
		"ZooKeeper dataDir to read (holds version-2/snapshot.*)",
		"ZooKeeper dataLogDir (holds version-2/log.*; default: -from)",
		"corral dataDir to write (must hold no snapshot or log)",
		"corral dataLogDir to create (default: -to)")
}

// runExportZooKeeper is `corral export-zookeeper`.
func runExportZooKeeper(args []string) int {
	return runMigrate("export-zookeeper", args, os.Stdout, os.Stderr, migrate.Export,
		"corral dataDir to read (of a stopped server)",
		"corral dataLogDir (default: -from)",
		"ZooKeeper dataDir to write (must hold no snapshot or log)",
		"ZooKeeper dataLogDir to create (default: -to)")
}

func runMigrate(name string, args []string, stdout, stderr io.Writer, conv func(migrate.Options) (migrate.Result, error),
	fromDoc, fromLogDoc, toDoc, toLogDoc string) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o migrate.Options
	fs.StringVar(&o.From, "from", "", fromDoc)
	fs.StringVar(&o.FromLog, "from-log", "", fromLogDoc)
	fs.StringVar(&o.To, "to", "", toDoc)
	fs.StringVar(&o.ToLog, "to-log", "", toLogDoc)
	quiet := fs.Bool("q", false, "log only warnings and errors")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.From == "" || o.To == "" || fs.NArg() != 0 {
		fmt.Fprintf(stderr, "usage: corral %s -from DIR [-from-log DIR] -to DIR [-to-log DIR]\n", name)
		fs.PrintDefaults()
		return 2
	}
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	res, err := conv(o)
	if err != nil {
		fmt.Fprintf(stderr, "corral %s: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdout, "read %s (zxid %#x) and %d logged transactions; wrote %s: %d znodes, %d sessions, zxid %#x\n",
		orNone(res.SnapshotFile), res.SnapshotZxid, res.Transactions, res.Written, res.Nodes, res.Sessions, res.Zxid)
	return 0
}

func orNone(s string) string {
	if s == "" {
		return "no snapshot"
	}
	return s
}
