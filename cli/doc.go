// Package cli is `corral cli`, a shell for any ZooKeeper-compatible server
// (corral or Apache ZooKeeper) that speaks zkCli.sh's language: the same
// commands, option syntax and output formats as ZooKeeper 3.9's
// ZooKeeperMain, so that muscle memory and scripts written against zkCli
// keep working. It is built only on the repository's Go client.
//
//	corral cli [-server host:port[,...][/chroot]] [-timeout ms]           # interactive
//	corral cli [-server host:port[,...][/chroot]] [-timeout ms] CMD ARGS  # one command
//
// Commands: ls [-s] [-w] [-R] path, get [-s] [-w] [-b] [-x] path,
// stat [-w] path, create [-s] [-e] [-c] [-t ttl] path [data] [acl],
// set path data [-s] [-v version] [-b], delete [-v version] path,
// deleteall path [-b batch size], getAcl [-s] path,
// setAcl [-s] [-v version] [-R] path acl, addauth scheme auth, whoami,
// addWatch [-m mode] path, removewatches path [-c|-d|-a|-p|-r] [-l],
// printwatches on|off, sync path, getAllChildrenNumber path,
// getEphemerals [path], history, redo cmdno, connect [host:port],
// close, quit, version, help. ACLs are written scheme:id:perms, comma
// separated (world:anyone:cdrwa, digest:user:hash:rw, auth::cdrwa,
// ip:1.2.3.4:r); arguments may be quoted with "..." or '...'.
//
// # Exit status
//
// One-shot mode exits with the command's status; the shell exits (on quit,
// end of input or Ctrl-D) with the status of the last command it ran, as
// zkCli does:
//
//	0  the command succeeded
//	1  the command failed: a ZooKeeper error (no node, bad version, no
//	   auth, ...), a lost connection, or no connection at all
//	2  usage error: unknown command or option, missing argument, malformed
//	   number, ACL, base64 data or path (checked before anything is sent)
//
// zkCli itself exits 1 for usage errors and 127 for an unknown command.
//
// # Output
//
// Results go to stdout and errors to stderr, with zkCli's texts ("Node does
// not exist: /x", "KeeperErrorCode = NoAuth for /x", ...). Differences from
// zkCli, all chosen for scripts: "Created /path" goes to stdout (zkCli
// writes it to stderr), so `p=$(corral cli create -s /q/item- x)` works;
// one-shot mode prints no connection banner or session events;
// getEphemerals sorts its list; a malformed ACL or an unknown permission
// letter is a usage error instead of being skipped.
//
// Interactive mode shows zkCli's prompt and, when stdin and stdout are a
// terminal, edits lines (arrows, history, Ctrl-A/E/K/U/W, Tab completes
// command names; Ctrl-C at the prompt or Ctrl-D on an empty line quits,
// Ctrl-C while a command runs interrupts it). When stdin is not a terminal it reads
// plain lines without a prompt, so a script can be piped in. Watch events
// and session changes are printed as zkCli prints them ("WATCHER::" then
// "WatchedEvent state:... type:... path:... zxid: ..."); an event the
// server sent before the reply to a command is printed before that
// command's output.
//
// Files: main.go (flags, Config, Main), shell.go (the loop, history,
// dispatch), lines.go (plain and terminal line readers), tokenize.go and
// options.go (argument syntax), commands.go (command table; session and
// shell commands), cmd_nodes.go, cmd_acl.go, cmd_watch.go (commands),
// events.go (watch event printer), format.go (output formats), acl.go,
// path.go, errors.go.
package cli
