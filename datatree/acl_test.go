package datatree

import (
	"errors"
	"reflect"
	"testing"

	"github.com/corral-db/corral/wire"
)

// Expected digests are DigestAuthenticationProvider.generateDigest's.
func TestDigestID(t *testing.T) {
	cases := map[string]string{
		"alice:secret": "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=",
		"super:test":   "super:D/InIHSb7yEEbrWz8b9l71RjZJU=",
		":":            ":BaefBs8/Z/cm2uaNGKIpD2yaUMk=",
		"a:b:c":        "a:cLzgnoJ6mP5qz3w+mwvPE2vDgu0=",
		"nocolon":      "nocolon:Ra+cHr2ZoHvBjtNArFGNGlVie4g=",
	}
	for in, want := range cases {
		if got := DigestID(in); got != want {
			t.Errorf("DigestID(%q) = %q, want %q", in, got, want)
		}
	}
}

// Expected values are DigestAuthenticationProvider.isValid's.
func TestValidDigestID(t *testing.T) {
	cases := map[string]bool{
		"alice:abc": true, "alice:": false, "alice": false, "": false, ":": false,
		":abc": true, "a:b:": true, "a::": false, "a:b:c": false, "::b": false,
		"a:b::": true, ":::": false,
	}
	for in, want := range cases {
		if got := validDigestID(in); got != want {
			t.Errorf("validDigestID(%q) = %v, want %v", in, got, want)
		}
	}
}

// Expected values are IPAuthenticationProvider.isValid / matches'.
func TestIPACL(t *testing.T) {
	valid := map[string]bool{
		"127.0.0.1": true, "127.0.0.1/8": true, "127.0.0.1/0": true, "127.0.0.1/32": true,
		"127.0.0.1/33": false, "127.0.0.1/-1": false, "127.0.0.1/": false, "127.0.0.1/+8": true,
		"1.2.3": false, "1.2.3.4.": false, "256.1.1.1": false, "-0.1.1.1": true,
		"+1.2.3.4": true, "01.002.3.4": true, "::1": false, "0:0:0:0:0:0:0:1": false,
		"fe80::1/64": false, "a.b.c.d": false, "1.2.3.4/8/1": false, "": false,
		" 1.2.3.4": false, "1.2.3.4 ": false,
	}
	for in, want := range valid {
		if _, _, got := parseIPACL(in); got != want {
			t.Errorf("valid(%q) = %v, want %v", in, got, want)
		}
	}
	matches := []struct {
		id, acl string
		want    bool
	}{
		{"127.0.0.1", "127.0.0.1", true}, {"127.0.0.2", "127.0.0.1", false},
		{"127.0.0.2", "127.0.0.1/8", true}, {"128.0.0.1", "127.0.0.1/8", false},
		{"10.1.2.3", "10.1.0.0/16", true}, {"10.2.2.3", "10.1.0.0/16", false},
		{"10.1.2.3", "10.1.2.0/23", true}, {"10.1.3.3", "10.1.2.0/23", true},
		{"10.1.4.3", "10.1.2.0/23", false}, {"1.2.3.4", "0.0.0.0/0", true},
		{"0:0:0:0:0:0:0:1", "127.0.0.1", false}, {"127.0.0.1", "127.0.0.1/33", false},
		{"bogus", "0.0.0.0/0", false}, {"10.1.2.3", "10.1.2.3/+32", true},
	}
	for _, m := range matches {
		if got := ipMatches(m.id, m.acl); got != m.want {
			t.Errorf("ipMatches(%q, %q) = %v, want %v", m.id, m.acl, got, m.want)
		}
	}
}

func acl(perms int32, scheme, id string) wire.ACL {
	return wire.ACL{Perms: perms, ID: wire.Id{Scheme: scheme, ID: id}}
}

// Expected results come from PrepRequestProcessor.fixupACL in 3.9.3.
func TestFixupACL(t *testing.T) {
	ipOnly := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}}
	dig := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "alice:X="}}
	two := append(append([]wire.Id(nil), dig...), wire.Id{Scheme: "digest", ID: "bob:Y="})
	sup := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "super:Z="}, {Scheme: "super", ID: ""}}
	alice := acl(31, "digest", "alice:X=")
	cases := []struct {
		name string
		auth []wire.Id
		in   []wire.ACL
		want []wire.ACL // nil: InvalidACL
	}{
		{"empty", ipOnly, []wire.ACL{}, nil},
		{"null", ipOnly, nil, nil},
		{"open", ipOnly, wire.OpenACLUnsafe, wire.OpenACLUnsafe},
		{"world foo", ipOnly, []wire.ACL{acl(31, "world", "foo")}, nil},
		{"auth none", ipOnly, []wire.ACL{acl(31, "auth", "")}, nil},
		{"auth digest", dig, []wire.ACL{acl(31, "auth", "")}, []wire.ACL{alice}},
		{"auth any id", dig, []wire.ACL{acl(31, "auth", "whatever")}, []wire.ACL{alice}},
		{"auth two", two, []wire.ACL{acl(5, "auth", "")}, []wire.ACL{acl(5, "digest", "alice:X="), acl(5, "digest", "bob:Y=")}},
		{"auth super", sup, []wire.ACL{acl(31, "auth", "")}, []wire.ACL{acl(31, "digest", "super:Z=")}},
		{"auth plus same", dig, []wire.ACL{acl(31, "auth", ""), alice}, []wire.ACL{alice, alice}},
		{"dup", ipOnly, []wire.ACL{acl(31, "world", "anyone"), acl(31, "world", "anyone")}, wire.OpenACLUnsafe},
		{"dup perms differ", ipOnly, []wire.ACL{acl(31, "world", "anyone"), acl(1, "world", "anyone")}, []wire.ACL{acl(31, "world", "anyone"), acl(1, "world", "anyone")}},
		{"digest bad", ipOnly, []wire.ACL{acl(31, "digest", "alice")}, nil},
		{"digest ok", ipOnly, []wire.ACL{acl(31, "digest", "alice:abc")}, []wire.ACL{acl(31, "digest", "alice:abc")}},
		{"ip ok", ipOnly, []wire.ACL{acl(31, "ip", "10.0.0.0/8")}, []wire.ACL{acl(31, "ip", "10.0.0.0/8")}},
		{"ip v6", ipOnly, []wire.ACL{acl(31, "ip", "::1")}, nil},
		{"super", ipOnly, []wire.ACL{acl(31, "super", "")}, nil},
		{"unknown", ipOnly, []wire.ACL{acl(31, "foo", "bar")}, nil},
		{"sasl", ipOnly, []wire.ACL{acl(31, "sasl", "bar")}, nil},
		{"x509 not a name", ipOnly, []wire.ACL{acl(31, "x509", "bar")}, nil},
		{"x509 bad type", ipOnly, []wire.ACL{acl(31, "x509", "C N=a")}, nil},
		{"x509", ipOnly, []wire.ACL{acl(31, "x509", `CN=a\,b,O=c+OU=d`)}, []wire.ACL{acl(31, "x509", `CN=a\,b,O=c+OU=d`)}},
		{"auth x509", []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "x509", ID: "CN=a"}}, []wire.ACL{acl(1, "auth", "")}, []wire.ACL{acl(1, "x509", "CN=a")}},
		{"perm 0", ipOnly, []wire.ACL{acl(0, "world", "anyone")}, []wire.ACL{acl(0, "world", "anyone")}},
		{"perm 99", ipOnly, []wire.ACL{acl(99, "world", "anyone")}, []wire.ACL{acl(99, "world", "anyone")}},
		{"auth twice", dig, []wire.ACL{acl(31, "auth", ""), acl(1, "auth", "")}, []wire.ACL{alice, acl(1, "digest", "alice:X=")}},
		{"auth twice same perms", dig, []wire.ACL{acl(31, "auth", ""), acl(31, "auth", "x")}, []wire.ACL{alice, alice}},
	}
	for _, c := range cases {
		got, err := FixupACL(c.in, c.auth)
		if c.want == nil {
			if !errors.Is(err, wire.CodeInvalidACL) {
				t.Errorf("%s: got %v, %v; want InvalidACL", c.name, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestCheckPerm(t *testing.T) {
	ip := wire.Id{Scheme: "ip", ID: "10.1.2.3"}
	alice := wire.Id{Scheme: "digest", ID: "alice:X="}
	super := wire.Id{Scheme: "super", ID: ""}
	cases := []struct {
		name string
		acl  []wire.ACL
		perm int32
		ids  []wire.Id
		want bool
	}{
		{"empty acl allows", nil, wire.PermAdmin, nil, true},
		{"open", wire.OpenACLUnsafe, wire.PermWrite, nil, true},
		{"read only denies write", wire.ReadACLUnsafe, wire.PermWrite, []wire.Id{ip}, false},
		{"read only allows read", wire.ReadACLUnsafe, wire.PermRead, nil, true},
		{"super bypasses", wire.ReadACLUnsafe, wire.PermWrite, []wire.Id{ip, super}, true},
		{"world other id", []wire.ACL{acl(31, "world", "someone")}, wire.PermRead, []wire.Id{ip}, false},
		{"digest match", []wire.ACL{acl(wire.PermRead, "digest", "alice:X=")}, wire.PermRead, []wire.Id{ip, alice}, true},
		{"digest wrong perm", []wire.ACL{acl(wire.PermRead, "digest", "alice:X=")}, wire.PermWrite, []wire.Id{ip, alice}, false},
		{"digest other user", []wire.ACL{acl(31, "digest", "bob:Y=")}, wire.PermRead, []wire.Id{ip, alice}, false},
		{"digest not authed", []wire.ACL{acl(31, "digest", "alice:X=")}, wire.PermRead, []wire.Id{ip}, false},
		{"digest id under ip scheme", []wire.ACL{acl(31, "ip", "alice:X=")}, wire.PermRead, []wire.Id{alice}, false},
		{"ip exact", []wire.ACL{acl(31, "ip", "10.1.2.3")}, wire.PermRead, []wire.Id{ip}, true},
		{"ip prefix", []wire.ACL{acl(31, "ip", "10.1.0.0/16")}, wire.PermRead, []wire.Id{ip}, true},
		{"ip other net", []wire.ACL{acl(31, "ip", "10.2.0.0/16")}, wire.PermRead, []wire.Id{ip}, false},
		{"second entry", []wire.ACL{acl(31, "digest", "bob:Y="), acl(wire.PermCreate, "ip", "10.0.0.0/8")}, wire.PermCreate, []wire.Id{ip}, true},
		{"unknown scheme", []wire.ACL{acl(31, "sasl", "alice")}, wire.PermRead, []wire.Id{{Scheme: "sasl", ID: "alice"}}, false},
		{"x509 match", []wire.ACL{acl(wire.PermRead, "x509", "CN=a,O=b")}, wire.PermRead, []wire.Id{ip, {Scheme: "x509", ID: "CN=a,O=b"}}, true},
		{"x509 other name", []wire.ACL{acl(wire.PermRead, "x509", "CN=a,O=b")}, wire.PermRead, []wire.Id{ip, {Scheme: "x509", ID: "CN=a"}}, false},
		{"x509 name as digest", []wire.ACL{acl(wire.PermRead, "x509", "CN=a")}, wire.PermRead, []wire.Id{{Scheme: "digest", ID: "CN=a"}}, false},
		{"perms mask", []wire.ACL{acl(wire.PermRead|wire.PermAdmin, "world", "anyone")}, wire.PermRead | wire.PermAdmin, nil, true},
	}
	for _, c := range cases {
		if got := CheckPerm(c.acl, c.perm, c.ids); got != c.want {
			t.Errorf("%s: CheckPerm = %v, want %v", c.name, got, c.want)
		}
	}
}

// Expected values are Java's id.replaceAll(":.*", ":x").
func TestMaskDigests(t *testing.T) {
	masks := map[string]string{
		"alice:abc": "alice:x", "alice": "alice", "a:b:c": "a:x",
		"a:b\nc:d": "a:x\nc:x", "a:b\r\nc:d": "a:x\r\nc:x", ":": ":x", "": "",
		"a:b\u2028c:d": "a:x\u2028c:x",
	}
	for in, want := range masks {
		if got := maskDigest(in); got != want {
			t.Errorf("maskDigest(%q) = %q, want %q", in, got, want)
		}
	}
	in := []wire.ACL{acl(31, "world", "anyone"), acl(1, "digest", "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="), acl(2, "ip", "1.2.3.4")}
	orig := append([]wire.ACL(nil), in...)
	got := MaskDigests(in)
	want := []wire.ACL{acl(31, "world", "anyone"), acl(1, "digest", "alice:x"), acl(2, "ip", "1.2.3.4")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MaskDigests = %v, want %v", got, want)
	}
	if !reflect.DeepEqual(in, orig) {
		t.Error("MaskDigests modified its input")
	}
	if got := MaskDigests(wire.OpenACLUnsafe); &got[0] != &wire.OpenACLUnsafe[0] {
		t.Error("MaskDigests copied a list without digests")
	}
}

func TestACLInterning(t *testing.T) {
	tr := New()
	h, tx := hdr(2, wire.OpCreate), createTxn("/a", nil, 1)
	tx.ACL = []wire.ACL{acl(31, "world", "anyone")} // equal to, not the same slice as, OPEN_ACL_UNSAFE
	var r Result
	tr.Apply(h, tx, &r)
	h, tx = hdr(3, wire.OpCreate), createTxn("/b", nil, 2)
	tx.ACL = []wire.ACL{acl(31, "world", "anyone")}
	tr.Apply(h, tx, &r)
	a, b := tr.ACL(tr.Get("/a")), tr.ACL(tr.Get("/b"))
	if &a[0] != &b[0] || &a[0] != &tr.ACL(tr.Get("/"))[0] {
		t.Error("equal ACL lists are not shared")
	}
	if n := tr.acls.size(); n != 2 { // open, read-only (/zookeeper/config)
		t.Errorf("acl cache holds %d lists, want 2", n)
	}
	// A list no node uses any more is forgotten.
	tr.Apply(hdr(4, wire.OpSetACL), &txnT{Type: wire.OpSetACL, Path: "/zookeeper/config", ACL: wire.OpenACLUnsafe, Version: 0}, &r)
	if n := tr.acls.size(); n != 1 {
		t.Errorf("acl cache holds %d lists after the last user changed, want 1", n)
	}
	checkInvariants(t, tr)
}
