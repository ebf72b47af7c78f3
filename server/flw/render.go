package flw

import (
	"bytes"
	"strconv"

	"github.com/corral-db/corral/wire"
)

// notServing is ZooKeeper's AbstractFourLetterCommand.ZK_NOT_SERVING.
const notServing = "This ZooKeeper instance is not currently serving requests"

// telnetCloseName is the name ZooKeeper's whitelist and its "not executed"
// message use for the telnet close sequence (wire.TelnetClose).
const telnetCloseName = "telnet close"

// words are the commands ZooKeeper 3.9.3 knows, by the name its whitelist
// uses. "*" in the whitelist enables exactly these.
var words = [...]string{
	"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk",
	"srst", "srvr", "stat", "wchc", "wchp", "wchs", "mntr", "isro", "hash",
	telnetCloseName,
}

// whitelistName maps a word as wire.FourLetterWord returns it to the name
// the whitelist and the "not executed" message use.
func whitelistName(word string) string {
	if word == wire.TelnetClose {
		return telnetCloseName
	}
	return word
}

func known(name string) bool {
	for _, w := range words {
		if w == name {
			return true
		}
	}
	return false
}

// Allowed reports whether word may run under whitelist, the parsed
// 4lw.commands.whitelist: nil or containing "*" allows every known word;
// otherwise the word must be listed. srvr is always allowed, as in
// ZooKeeper (zkServer.sh depends on it). ZooKeeper also allows isro when
// readonlymode.enabled is set; the server adds "isro" to the map then.
// The telnet close sequence is listed as "telnet close".
func Allowed(word string, whitelist map[string]bool) bool {
	name := whitelistName(word)
	if !known(name) {
		return false
	}
	if whitelist == nil || whitelist["*"] || name == "srvr" {
		return true
	}
	return whitelist[name] || whitelist[word]
}

// Render returns what ZooKeeper writes for word (as wire.FourLetterWord
// returns it) before closing the connection. A word the whitelist does not
// allow gets "<word> is not executed because it is not in the whitelist.";
// an unknown word gets nil (ZooKeeper closes such connections without
// writing). The telnet close sequence, when allowed, writes nothing.
func Render(word string, s *State, whitelist map[string]bool) []byte {
	name := whitelistName(word)
	if !known(name) {
		return nil
	}
	var b bytes.Buffer
	if !Allowed(word, whitelist) {
		b.WriteString(name)
		b.WriteString(" is not executed because it is not in the whitelist.\n")
		return b.Bytes()
	}
	if s == nil {
		s = &State{}
	}

	// Words that print regardless of whether the server is serving.
	switch name {
	case "ruok":
		return []byte("imok")
	case "isro":
		switch {
		case !s.Serving:
			return []byte("null")
		case s.ReadOnly:
			return []byte("ro")
		}
		return []byte("rw")
	case "gtmk", "stmk":
		return strconv.AppendInt(nil, s.TraceMask, 10)
	case "envi":
		renderEnvi(&b, s)
		return b.Bytes()
	case telnetCloseName:
		return []byte{}
	}

	if !s.Serving && s.Recovering {
		switch name {
		case "srvr":
			renderRecovering(&b, s)
			return b.Bytes()
		case "mntr":
			renderMntr(&b, s)
			return b.Bytes()
		}
	}
	if !s.Serving {
		b.WriteString(notServing)
		// DigestCommand uses print, every other command println.
		if name != "hash" {
			b.WriteByte('\n')
		}
		return b.Bytes()
	}

	switch name {
	case "srvr":
		renderStat(&b, s, false)
	case "stat":
		renderStat(&b, s, true)
	case "cons":
		renderCons(&b, s)
	case "wchs":
		renderWchs(&b, s)
	case "wchc":
		renderWchc(&b, s)
	case "wchp":
		renderWchp(&b, s)
	case "dump":
		renderDump(&b, s)
	case "mntr":
		renderMntr(&b, s)
	case "conf":
		renderConf(&b, s)
	case "dirs":
		b.WriteString("datadir_size: ")
		b.WriteString(strconv.FormatInt(s.DataDirSize, 10))
		b.WriteString("\nlogdir_size: ")
		b.WriteString(strconv.FormatInt(s.LogDirSize, 10))
		b.WriteByte('\n')
	case "crst":
		b.WriteString("Connection stats reset.\n")
	case "srst":
		b.WriteString("Server stats reset.\n")
	case "hash":
		for _, d := range s.Digest {
			b.WriteString(javaHex(d.Zxid))
			b.WriteString(": ")
			b.WriteString(strconv.FormatInt(int64(d.Digest), 10))
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return []byte{} // known word, empty output (hash with no digests): not nil
	}
	return b.Bytes()
}

// renderConf prints ZooKeeperServer.dumpConf's key=value lines. Quorum
// servers then print "membership: " and the quorum verifier's text, which
// ends without a newline ("...\nversion=100000000"); a KV with an empty
// Key carries such text and is written verbatim, with no newline added.
func renderConf(b *bytes.Buffer, s *State) {
	for _, kv := range s.Config {
		if kv.Key == "" {
			b.WriteString(kv.Value)
			continue
		}
		b.WriteString(kv.Key)
		b.WriteByte('=')
		b.WriteString(kv.Value)
		b.WriteByte('\n')
	}
}

func renderEnvi(b *bytes.Buffer, s *State) {
	b.WriteString("Environment:\n")
	for _, kv := range s.Env {
		b.WriteString(kv.Key)
		b.WriteByte('=')
		b.WriteString(kv.Value)
		b.WriteByte('\n')
	}
}
