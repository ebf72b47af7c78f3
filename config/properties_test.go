package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

type kv struct{ K, V string }

func readPairs(t *testing.T, in string) []kv {
	t.Helper()
	props, err := readProperties(strings.NewReader(in))
	if err != nil {
		t.Fatalf("readProperties(%q): %v", in, err)
	}
	var out []kv
	for _, p := range props {
		out = append(out, kv{p.Key, p.Value})
	}
	return out
}

// propertiesCases are java.util.Properties edge cases; zookeeper_test.go
// also feeds them to the JVM and checks it agrees with want.
var propertiesCases = []struct {
	name string
	in   string
	want []kv
}{
	{"equals", "a=b\n", []kv{{"a", "b"}}},
	{"colon", "a:b\n", []kv{{"a", "b"}}},
	{"space", "a b\n", []kv{{"a", "b"}}},
	{"tab separator", "a\tb\n", []kv{{"a", "b"}}},
	{"space around equals", "a  =  b\n", []kv{{"a", "b"}}},
	{"space then colon", "a : b\n", []kv{{"a", "b"}}},
	{"second separator is value", "a==b\n", []kv{{"a", "=b"}}},
	{"space equals equals", "a = =b\n", []kv{{"a", "=b"}}},
	{"trailing space kept", "a=b  \t\n", []kv{{"a", "b  \t"}}},
	{"leading space skipped", "   \t\fa=b\n", []kv{{"a", "b"}}},
	{"key only", "a\n", []kv{{"a", ""}}},
	{"key and equals", "a=\n", []kv{{"a", ""}}},
	{"empty key", "=b\n", []kv{{"", "b"}}},
	{"hash comment", "# a=b\nc=d\n", []kv{{"c", "d"}}},
	{"bang comment", "! a=b\nc=d\n", []kv{{"c", "d"}}},
	{"indented comment", "   # a=b\n", nil},
	{"hash not comment mid line", "a=b # c\n", []kv{{"a", "b # c"}}},
	{"comment continuation ignored", "# a \\\nb=c\n", []kv{{"b", "c"}}},
	{"continuation", "a=b\\\n   c\n", []kv{{"a", "bc"}}},
	{"continuation crlf", "a=b\\\r\n   c\r\nd=e\r\n", []kv{{"a", "bc"}, {"d", "e"}}},
	{"continuation cr", "a=b\\\r   c\rd=e\r", []kv{{"a", "bc"}, {"d", "e"}}},
	{"continuation into blank line", "a=b\\\n\nc=d\n", []kv{{"a", "b"}, {"c", "d"}}},
	{"continued line starting with hash", "a=b\\\n  #c\n", []kv{{"a", "b#c"}}},
	{"escaped backslash not continuation", "a=b\\\\\nc=d\n", []kv{{"a", `b\`}, {"c", "d"}}},
	{"three backslashes continue", "a=b\\\\\\\nc\n", []kv{{"a", `b\c`}}},
	{"continuation at eof", "a=b\\", []kv{{"a", "b"}}},
	{"no final newline", "a=b", []kv{{"a", "b"}}},
	{"blank lines", "\n\n  \n\t\na=b\n\n", []kv{{"a", "b"}}},
	{"escaped separator in key", `a\=b\:c\ d=e` + "\n", []kv{{"a=b:c d", "e"}}},
	{"escapes", `a=\t\n\r\f\\\q\"` + "\n", []kv{{"a", "\t\n\r\f\\q\""}}},
	{"unicode escape", `a=\u0041\u00e9\u20AC` + "\n", []kv{{"a", "Aé€"}}},
	{"surrogate pair", `a=\uD83D\uDE00` + "\n", []kv{{"a", "😀"}}},
	{"windows path", `dataDir=C:\\zk\\data` + "\n", []kv{{"dataDir", `C:\zk\data`}}},
	{"unescaped windows path", `dataDir=C:\zk\data` + "\n", []kv{{"dataDir", `C:zkdata`}}},
	{"duplicates kept in order", "a=1\nb=2\na=3\n", []kv{{"a", "1"}, {"b", "2"}, {"a", "3"}}},
	{"server line", "server.1=127.0.0.1:2888:3888;2181\n", []kv{{"server.1", "127.0.0.1:2888:3888;2181"}}},
	{"lone cr endings", "a=1\rb=2\r", []kv{{"a", "1"}, {"b", "2"}}},
	{"continuation of lone backslash line", "\\\n#c=d\ne=f\n", []kv{{"e", "f"}}},
	{"form feed in value", "a=b\fc\n", []kv{{"a", "b\fc"}}},
}

func TestReadProperties(t *testing.T) {
	for _, tc := range propertiesCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := readPairs(t, tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readProperties(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestReadPropertiesLineNumbers(t *testing.T) {
	props, err := readProperties(strings.NewReader("# c\n\na=b\\\n c\r\nd=e\rf=g\n"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, p := range props {
		lines = append(lines, p.Line)
	}
	if want := []int{3, 5, 6}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines = %v, want %v", lines, want)
	}
}

func TestReadPropertiesMalformedUnicode(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\u12G4`, `\uZZZZ=b`} {
		_, err := readProperties(strings.NewReader(in))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("readProperties(%q) = %v, want a line 1 ErrInvalid", in, err)
		}
	}
}

func TestReadPropertiesTooLarge(t *testing.T) {
	_, err := readProperties(strings.NewReader(strings.Repeat("#", maxFileSize+1)))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("oversized file: err = %v, want ErrInvalid", err)
	}
}

func TestJavaTrim(t *testing.T) {
	for in, want := range map[string]string{
		"  a b \t\f\r\n": "a b",
		"\x00\x1fa\x01":  "a",
		"a\u00a0":        "a\u00a0", // String.trim leaves non-ASCII space
		"":               "",
	} {
		if got := javaTrim(in); got != want {
			t.Errorf("javaTrim(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapePropertyRoundTrip(t *testing.T) {
	for _, s := range []string{
		"", " ", "  lead", "trail  ", "a=b:c#d!e", `back\slash`, "tab\there",
		"nl\nnl\r\f", "é€😀", "\x00\x7f", "#start", "!start", "C:\\zk data\\x",
	} {
		for _, isKey := range []bool{true, false} {
			k, v := "k", s
			if isKey {
				k, v = s, "v"
				if s == "" {
					continue
				}
			}
			line := escapeProperty(k, true) + "=" + escapeProperty(v, false) + "\n"
			got := readPairs(t, line)
			if want := []kv{{k, v}}; !reflect.DeepEqual(got, want) {
				t.Errorf("escaped %q read back as %q, want %q", line, got, want)
			}
			for _, r := range line {
				if r > 0x7e {
					t.Errorf("escaped line %q is not ASCII", line)
					break
				}
			}
		}
	}
}

func FuzzReadProperties(f *testing.F) {
	for _, tc := range propertiesCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		props, err := readProperties(strings.NewReader(in))
		if err != nil {
			return
		}
		// Whatever we read, writing it back must read back the same.
		var sb strings.Builder
		for _, p := range props {
			if p.Key == "" || !utf8.ValidString(p.Key) || !utf8.ValidString(p.Value) {
				return
			}
			sb.WriteString(escapeProperty(p.Key, true) + "=" + escapeProperty(p.Value, false) + "\n")
		}
		again, err := readProperties(strings.NewReader(sb.String()))
		if err != nil {
			t.Fatalf("re-reading %q: %v", sb.String(), err)
		}
		if len(again) != len(props) {
			t.Fatalf("re-read %d pairs, want %d", len(again), len(props))
		}
		for i := range props {
			if again[i].Key != props[i].Key || again[i].Value != props[i].Value {
				t.Fatalf("pair %d: re-read %q=%q, want %q=%q", i, again[i].Key, again[i].Value, props[i].Key, props[i].Value)
			}
		}
	})
}
