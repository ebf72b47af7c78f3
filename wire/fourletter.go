package wire

// Four-letter words (PROTOCOL §14.1). A new connection's first four bytes
// are read as a frame length; if they spell a known command the server runs
// it instead. Every command's int is far above any legal frame length, so
// the test cannot misfire on a real ConnectRequest.

// TelnetClose is the word FourLetterWord returns for the telnet "interrupt
// process, do" sequence 0xfff4fffd, on which ZooKeeper just closes the
// connection.
const TelnetClose = "\xff\xf4\xff\xfd"

func word(a, b, c, d byte) int32 {
	return int32(uint32(a)<<24 | uint32(b)<<16 | uint32(c)<<8 | uint32(d))
}

// FourLetterWord reports whether first4, the first four bytes of a
// connection read as a big-endian int32, is a command ZooKeeper knows, and
// which (its four letters, or TelnetClose). Whether the command may run
// (the whitelist) is the server's business. stmk is followed by an 8-byte
// mask that the caller reads itself.
func FourLetterWord(first4 int32) (string, bool) {
	b := [4]byte{byte(first4 >> 24), byte(first4 >> 16), byte(first4 >> 8), byte(first4)}
	// Comparing a converted array does not allocate; returning the case's
	// constant keeps the result allocation-free too.
	switch string(b[:]) {
	case "conf":
		return "conf", true
	case "cons":
		return "cons", true
	case "crst":
		return "crst", true
	case "dirs":
		return "dirs", true
	case "dump":
		return "dump", true
	case "envi":
		return "envi", true
	case "gtmk":
		return "gtmk", true
	case "ruok":
		return "ruok", true
	case "stmk":
		return "stmk", true
	case "srst":
		return "srst", true
	case "srvr":
		return "srvr", true
	case "stat":
		return "stat", true
	case "wchc":
		return "wchc", true
	case "wchp":
		return "wchp", true
	case "wchs":
		return "wchs", true
	case "mntr":
		return "mntr", true
	case "isro":
		return "isro", true
	case "hash":
		return "hash", true
	case TelnetClose:
		return TelnetClose, true
	}
	return "", false
}

// FourLetterCode is the inverse of FourLetterWord: the int32 a client's
// first four bytes carry for a known word, for clients and tests.
func FourLetterCode(w string) (int32, bool) {
	if len(w) != 4 {
		return 0, false
	}
	c := word(w[0], w[1], w[2], w[3])
	if _, ok := FourLetterWord(c); !ok {
		return 0, false
	}
	return c, true
}
