package cli

import "strings"

// splitLine splits a command line as zkCli does (ZooKeeperMain's
// `\s*([^"']\S*|"[^"]*"|'[^']*')\s*`): words are separated by white
// space; a word that starts with a double or single quote runs to the
// next identical quote, which may enclose spaces, and loses its quotes
// ("" is an empty argument). A quote inside a word is an ordinary
// character. There are no escapes. An unmatched opening quote is dropped.
func splitLine(line string) []string {
	var words []string
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case isSpace(c):
			i++
		case c == '"' || c == '\'':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				i++ // as the Java regex: no match here, try the next character
				continue
			}
			words = append(words, line[i+1:i+1+end])
			i += end + 2
		default:
			j := i
			for j < len(line) && !isSpace(line[j]) {
				j++
			}
			words = append(words, line[i:j])
			i = j
		}
	}
	return words
}

// isSpace is Java's regex \s: space, \t, \n, \v, \f, \r.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
