package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is one shell command: its zkCli usage, options, the number of
// positional arguments it takes, and whether it needs a session.
type command struct {
	name  string
	usage string // after the name, as zkCli prints it
	help  string // option lines zkCli adds to the usage, if any
	spec  optSpec
	min   int
	max   int // -1: no limit
	conn  bool
	run   func(s *shell, ctx context.Context, o *opts, out io.Writer) error
}

func (c command) usageText() string {
	return c.name + " " + c.usage + c.help
}

// commands lists every command, sorted as zkCli lists them (by name,
// upper case first).
func commands() []command {
	return []command{
		{name: "addWatch", usage: "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE",
			spec: optSpec{valued: "m"}, min: 1, max: 1, conn: true, run: cmdAddWatch},
		{name: "addauth", usage: "scheme auth", min: 1, max: 2, conn: true, run: cmdAddAuth},
		{name: "close", usage: "", max: 0, run: cmdClose},
		{name: "config", usage: "[-c] [-w] [-s]", spec: optSpec{flags: "cws"}, max: 0, conn: true, run: cmdConfig},
		{name: "connect", usage: "host:port", max: 1, run: cmdConnect},
		{name: "create", usage: "[-s] [-e] [-c] [-t ttl] path [data] [acl]",
			spec: optSpec{flags: "esc", valued: "t"}, min: 1, max: 3, conn: true, run: cmdCreate},
		{name: "delete", usage: "[-v version] path", spec: optSpec{valued: "v"}, min: 1, max: 2, conn: true, run: cmdDelete},
		{name: "deleteall", usage: "path [-b batch size]", spec: optSpec{valued: "b"}, min: 1, max: 1, conn: true, run: cmdDeleteAll},
		{name: "delquota", usage: "[-n|-b|-N|-B] path", spec: optSpec{flags: "nbNB"}, min: 1, max: 1, conn: true, run: cmdDelQuota},
		{name: "get", usage: "[-s] [-w] [-b] [-x] path",
			help: "\n -b   Output data in base64 format\n -s   Print znode stats additionally\n" +
				" -w   Watch for changes on the znode\n -x   Output data in hexdump format\n",
			spec: optSpec{flags: "swbx"}, min: 1, max: 2, conn: true, run: cmdGet},
		{name: "getAcl", usage: "[-s] path", spec: optSpec{flags: "s"}, min: 1, max: 1, conn: true, run: cmdGetACL},
		{name: "getAllChildrenNumber", usage: "path", min: 1, max: 1, conn: true, run: cmdGetAllChildrenNumber},
		{name: "getEphemerals", usage: "path", max: 1, conn: true, run: cmdGetEphemerals},
		{name: "help", usage: "", max: -1, run: cmdHelp},
		{name: "history", usage: "", max: -1, run: cmdHistory},
		{name: "listquota", usage: "path", min: 1, max: 1, conn: true, run: cmdListQuota},
		{name: "ls", usage: "[-s] [-w] [-R] path", spec: optSpec{flags: "swR"}, min: 1, max: 2, conn: true, run: cmdLs},
		{name: "printwatches", usage: "on|off", max: 1, run: cmdPrintWatches},
		{name: "quit", usage: "", max: -1},
		{name: "reconfig", usage: "[-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | [-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]",
			spec: optSpec{flags: "s", valued: "v", long: []string{"add", "remove", "members", "file"}}, max: 0, conn: true, run: cmdReconfig},
		{name: "redo", usage: "cmdno", min: 1, max: 1, run: cmdRedo},
		{name: "removewatches", usage: "path [-c|-d|-a] [-l]", spec: optSpec{flags: "cdaprl"}, min: 1, max: 1, conn: true, run: cmdRemoveWatches},
		{name: "set", usage: "path data [-s] [-v version] [-b]",
			help: "\n -b         Supply data in base64 format\n -s         Print znode stats additionally\n" +
				" -v <arg>   Set with an expected version\n",
			spec: optSpec{flags: "sb", valued: "v"}, min: 2, max: 2, conn: true, run: cmdSet},
		{name: "setAcl", usage: "[-s] [-v version] [-R] path acl", spec: optSpec{flags: "sR", valued: "v"}, min: 2, max: 2, conn: true, run: cmdSetACL},
		{name: "setquota", usage: "-n|-b|-N|-B val path", spec: optSpec{valued: "nbNB"}, min: 1, max: 1, conn: true, run: cmdSetQuota},
		{name: "stat", usage: "[-w] path", spec: optSpec{flags: "w"}, min: 1, max: 2, conn: true, run: cmdStat},
		{name: "sync", usage: "path", min: 1, max: 1, conn: true, run: cmdSync},
		{name: "version", usage: "", max: -1, run: cmdVersion},
		{name: "whoami", usage: "", max: -1, conn: true, run: cmdWhoAmI},
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames is the sorted list of names, for completion.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	slices.Sort(names)
	return names
}

// writeUsage prints the list of commands, as zkCli's usage does.
func (s *shell) writeUsage(w io.Writer) {
	fmt.Fprintln(w, "corral cli -server host:port[,host:port...][/chroot] -timeout ms cmd args")
	for _, c := range commands() {
		fmt.Fprintf(w, "\t%s %s\n", c.name, c.usage)
	}
}

func cmdHelp(s *shell, _ context.Context, _ *opts, out io.Writer) error {
	s.writeUsage(out)
	return nil
}

func cmdVersion(s *shell, _ context.Context, _ *opts, out io.Writer) error {
	v := s.cfg.Version
	if v == "" {
		v = "unknown"
	}
	fmt.Fprintf(out, "ZooKeeper CLI version: corral %s\n", v)
	return nil
}

// cmdRedo is reached only when redo is not the first word of a shell
// line (one-shot mode): there is no history to redo.
func cmdRedo(*shell, context.Context, *opts, io.Writer) error {
	return usagef("Command index out of range")
}

func cmdHistory(s *shell, _ context.Context, _ *opts, out io.Writer) error {
	// zkCli shows the last ten commands and this one.
	for i := max(s.count-10, 0); i <= s.count; i++ {
		if line, ok := s.history[i]; ok {
			fmt.Fprintf(out, "%d - %s\n", i, line)
		}
	}
	return nil
}

func cmdPrintWatches(s *shell, _ context.Context, o *opts, out io.Writer) error {
	if len(o.args) == 0 {
		state := "on"
		if s.quietWatches {
			state = "off"
		}
		fmt.Fprintf(out, "printwatches is %s\n", state)
		return nil
	}
	switch strings.ToLower(o.args[0]) {
	case "on":
		s.quietWatches = false
	case "off":
		s.quietWatches = true
	default:
		return usagef("printwatches on|off")
	}
	if s.printer != nil {
		s.printer.SetQuiet(s.quietWatches)
	}
	return nil
}

func cmdConnect(s *shell, ctx context.Context, o *opts, out io.Writer) error {
	if len(o.args) == 1 {
		s.servers = o.args[0]
	}
	s.disconnect()
	if !s.connect(ctx) {
		return &failure{} // connect said why
	}
	return nil
}

func cmdClose(s *shell, _ context.Context, _ *opts, _ io.Writer) error {
	s.disconnect()
	return nil
}
