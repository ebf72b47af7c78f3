package datatree

import (
	"errors"
	"testing"

	"github.com/corral-db/corral/wire"
)

// Expected results come from running ZooKeeper 3.9.3's
// PathUtils.validatePath on the same strings.
func TestValidatePath(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"", false}, {"/", true}, {"//", false}, {"/a", true}, {"/a/", false},
		{"a", false}, {"/a//b", false}, {"/.", false}, {"/..", false},
		{"/...", true}, {"/a/.", false}, {"/a/..", false}, {"/a/./b", false},
		{"/a/../b", false}, {"/.a", true}, {"/a.", true}, {"/..a", true},
		{"/a..", true}, {"/a/.b/..c", true}, {"/a\x00b", false},
		{"/a\x01", false}, {"/a\x1f", false}, {"/a ", true}, {"/a~", true},
		{"/a\x7f", false}, {"/a\u0080", false}, {"/a\u009f", false},
		{"/a\u00a0", true}, {"/a\ud7ff", true}, {"/a\ue000", false},
		{"/a\uf8ff", false}, {"/a\uf900", true}, {"/a\uffef", true},
		{"/a\ufff0", false}, {"/a\ufffd", false}, {"/a\uffff", false},
		{"/a\U0001F600", false}, {"/zookeeper", true}, {"/a b", true},
		{"/été", true}, {"/./a", false}, {"/a/b/c", true},
		// Not tried on Java, but what it decodes them to is rejected.
		{"/a\xff", false}, {"/a\xed\xa0\x80", false}, {"/a\xc0\x80", false},
	}
	for _, c := range cases {
		err := ValidatePath(c.path)
		if (err == nil) != c.ok {
			t.Errorf("ValidatePath(%q) = %v, want ok=%v", c.path, err, c.ok)
		}
		if err != nil && !errors.Is(err, wire.CodeBadArguments) {
			t.Errorf("ValidatePath(%q) error %v does not wrap CodeBadArguments", c.path, err)
		}
	}
}

func TestParentAndBase(t *testing.T) {
	cases := []struct{ p, parent, base string }{
		{"/", "", ""},
		{"/a", "/", "a"},
		{"/a/b", "/a", "b"},
		{"/a/b/c-0000000001", "/a/b", "c-0000000001"},
	}
	for _, c := range cases {
		if got := ParentPath(c.p); got != c.parent {
			t.Errorf("ParentPath(%q) = %q, want %q", c.p, got, c.parent)
		}
		if got := BaseName(c.p); got != c.base {
			t.Errorf("BaseName(%q) = %q, want %q", c.p, got, c.base)
		}
	}
}

func TestIsReservedPath(t *testing.T) {
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		if !IsReservedPath(p) {
			t.Errorf("%s should be reserved", p)
		}
	}
	for _, p := range []string{"", "/a", "/zookeeper/other", "/zookeeper/quota/x", "/zookeeperx"} {
		if IsReservedPath(p) {
			t.Errorf("%s should not be reserved", p)
		}
	}
}

// Expected values are Java's String.format("%010d", n).
func TestSequentialSuffix(t *testing.T) {
	cases := map[int32]string{
		0: "0000000000", 1: "0000000001", 42: "0000000042",
		2147483647: "2147483647", -1: "-000000001", -2147483648: "-2147483648",
		1234567890: "1234567890", -123: "-000000123",
	}
	for n, want := range cases {
		if got := SequentialSuffix(n); got != want {
			t.Errorf("SequentialSuffix(%d) = %q, want %q", n, got, want)
		}
		if got := string(AppendSequentialSuffix([]byte("/x-"), n)); got != "/x-"+want {
			t.Errorf("AppendSequentialSuffix(%d) = %q", n, got)
		}
	}
}
