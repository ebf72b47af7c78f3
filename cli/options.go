package cli

import (
	"slices"
	"strconv"
)

// optSpec declares a command's options, all single letters as in zkCli:
// flags take no value, valued options take one ("-v 3" or "-v3").
type optSpec struct {
	flags  string
	valued string
	// long are valued options spelled as one word after a single dash
	// (reconfig's -add, -remove, -members, -file).
	long []string
}

// opts is a parsed command line: options and positional arguments.
type opts struct {
	set    map[byte]bool
	values map[byte]string
	longs  map[string]string
	args   []string
}

func (o *opts) has(c byte) bool { return o.set[c] }

// parseOpts reads args (without the command name) the way commons-cli's
// DefaultParser reads zkCli's: options may appear anywhere ("set /a x -v
// 3"), flags may be bundled ("-sw"), "--" ends the options, and a lone
// "-" is an argument. Any other word starting with '-' must be a known
// option.
func parseOpts(args []string, spec optSpec) (*opts, error) {
	o := &opts{set: map[byte]bool{}, values: map[byte]string{}, longs: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			o.args = append(o.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			o.args = append(o.args, a)
			continue
		}
		if name := a[1:]; len(name) > 1 && slices.Contains(spec.long, name) {
			if i+1 >= len(args) {
				return nil, usagef("Missing argument for option: " + name)
			}
			i++
			o.longs[name] = args[i]
			continue
		}
	word:
		for j := 1; j < len(a); j++ {
			c := a[j]
			switch {
			case contains(spec.flags, c):
				o.set[c] = true
				continue
			case contains(spec.valued, c):
				o.set[c] = true
				if j+1 < len(a) {
					o.values[c] = a[j+1:]
				} else if i+1 < len(args) {
					i++
					o.values[c] = args[i]
				} else {
					return nil, usagef("Missing argument for option: " + string(c))
				}
			case j == 1:
				return nil, usagef("Unrecognized option: " + a)
			default:
				return nil, usagef("Unrecognized option: -" + string(c))
			}
			break word // a valued option took the rest of the word
		}
	}
	return o, nil
}

func contains(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// intValue reads a valued option as a 32-bit integer (versions, batch
// sizes); def if absent, msg (zkCli's text) if malformed.
func (o *opts) intValue(c byte, def int32, msg string) (int32, error) {
	v, ok := o.values[c]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, usagef(msg)
	}
	return int32(n), nil
}
