package datatree

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/corral-db/corral/wire"
)

// Authentication schemes the server knows (ZooKeeper's default
// ProviderRegistry: ip and digest; "super" is an id, not a provider).
const (
	SchemeWorld  = "world"
	SchemeAuth   = "auth"
	SchemeDigest = "digest"
	SchemeIP     = "ip"
	SchemeSuper  = "super"
	// SchemeX509 is the x509 provider's: the X.500 name of a client
	// certificate's subject (internal/zktls.PrincipalName), given to
	// connections on a TLS port.
	SchemeX509 = "x509"
)

// DigestID returns the digest-scheme id for "user:password", as
// DigestAuthenticationProvider.generateDigest does: the user (everything
// before the first ':') followed by ':' and base64(SHA1(whole input)).
// DigestID("alice:secret") == "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=".
func DigestID(userColonPassword string) string {
	user, _, _ := strings.Cut(userColonPassword, ":")
	sum := sha1.Sum([]byte(userColonPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// CheckPerm reports whether a connection holding the auth ids may perform
// an operation needing perm on a node with the given ACL, following
// ZooKeeperServer.checkACL: an empty ACL allows everything; a "super" id
// allows everything; otherwise some entry that grants perm must match:
// world:anyone matches everyone, a digest entry matches an equal digest id,
// an ip entry (address or address/bits, IPv4 as in ZooKeeper 3.9) matches
// an ip id inside it. Entries of other schemes match nothing.
func CheckPerm(acl []wire.ACL, perm int32, ids []wire.Id) bool {
	if len(acl) == 0 {
		return true
	}
	for i := range ids {
		if ids[i].Scheme == SchemeSuper {
			return true
		}
	}
	for i := range acl {
		a := &acl[i]
		if a.Perms&perm == 0 {
			continue
		}
		switch a.ID.Scheme {
		case SchemeWorld:
			if a.ID.ID == "anyone" {
				return true
			}
		case SchemeDigest:
			for j := range ids {
				if ids[j].Scheme == SchemeDigest && ids[j].ID == a.ID.ID {
					return true
				}
			}
		case SchemeIP:
			for j := range ids {
				if ids[j].Scheme == SchemeIP && ipMatches(ids[j].ID, a.ID.ID) {
					return true
				}
			}
		case SchemeX509:
			// X509AuthenticationProvider.matches: equal names. (Its
			// superUser clause is covered by the super id above.)
			for j := range ids {
				if ids[j].Scheme == SchemeX509 && ids[j].ID == a.ID.ID {
					return true
				}
			}
		}
	}
	return false
}

// FixupACL validates and expands the ACL of a create or setACL request for
// a connection holding authIDs, exactly as PrepRequestProcessor.fixupACL:
// duplicate entries of the request are dropped first; then world must be
// "anyone"; an "auth" entry (whatever its id) expands to one entry per
// authenticated id of the connection — every id but ip, world and super —
// and is invalid if there is none; digest ids must split into exactly two
// parts on ':' (Java String.split rules); ip ids must be an IPv4 address
// or address/bits; any other scheme is invalid. Expansion may produce
// duplicates, which ZooKeeper keeps. Errors wrap wire.CodeInvalidACL.
func FixupACL(acl []wire.ACL, authIDs []wire.Id) ([]wire.ACL, error) {
	uniq := removeDuplicateACLs(acl)
	if len(uniq) == 0 {
		return nil, fmt.Errorf("%w: empty ACL", wire.CodeInvalidACL)
	}
	out := make([]wire.ACL, 0, len(uniq))
	for _, a := range uniq {
		switch a.ID.Scheme {
		case SchemeWorld:
			if a.ID.ID != "anyone" {
				return nil, fmt.Errorf("%w: world id %q", wire.CodeInvalidACL, a.ID.ID)
			}
			out = append(out, a)
		case SchemeAuth:
			found := false
			for _, id := range authIDs {
				if isAuthenticatedScheme(id.Scheme) {
					found = true
					out = append(out, wire.ACL{Perms: a.Perms, ID: id})
				}
			}
			if !found {
				return nil, fmt.Errorf("%w: auth scheme without authenticated ids", wire.CodeInvalidACL)
			}
		case SchemeDigest:
			if !validDigestID(a.ID.ID) {
				return nil, fmt.Errorf("%w: digest id %q", wire.CodeInvalidACL, a.ID.ID)
			}
			out = append(out, a)
		case SchemeIP:
			if _, _, ok := parseIPACL(a.ID.ID); !ok {
				return nil, fmt.Errorf("%w: ip id %q", wire.CodeInvalidACL, a.ID.ID)
			}
			out = append(out, a)
		case SchemeX509:
			if !validX500Name(a.ID.ID) {
				return nil, fmt.Errorf("%w: x509 id %q", wire.CodeInvalidACL, a.ID.ID)
			}
			out = append(out, a)
		default:
			return nil, fmt.Errorf("%w: unknown scheme %q", wire.CodeInvalidACL, a.ID.Scheme)
		}
	}
	return out, nil
}

// isAuthenticatedScheme mirrors ServerAuthenticationProvider.isAuthenticated
// over the registered providers: digest is, ip is not, and ids without a
// provider ("super", "world") are skipped.
func isAuthenticatedScheme(scheme string) bool {
	return scheme == SchemeDigest || scheme == SchemeX509
}

// validX500Name approximates X509AuthenticationProvider.isValid (new
// X500Principal(id) does not throw): attribute=value pairs separated by
// unescaped ',', ';' or '+', each type a keyword or a dotted OID.
func validX500Name(id string) bool {
	if strings.TrimSpace(id) == "" {
		return false
	}
	var parts []string
	start, esc, quoted := 0, false, false
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ',' || c == ';' || c == '+'):
			parts = append(parts, id[start:i])
			start = i + 1
		}
	}
	if esc || quoted {
		return false
	}
	parts = append(parts, id[start:])
	for _, p := range parts {
		typ, _, ok := strings.Cut(p, "=")
		typ = strings.TrimSpace(typ)
		if !ok || typ == "" {
			return false
		}
		for _, r := range typ {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
				return false
			}
		}
	}
	return true
}

func removeDuplicateACLs(acl []wire.ACL) []wire.ACL {
	dup := false
	for i := 1; i < len(acl) && !dup; i++ {
		for j := 0; j < i; j++ {
			if acl[i] == acl[j] {
				dup = true
				break
			}
		}
	}
	if !dup {
		return acl
	}
	out := make([]wire.ACL, 0, len(acl))
outer:
	for _, a := range acl {
		for _, b := range out {
			if a == b {
				continue outer
			}
		}
		out = append(out, a)
	}
	return out
}

// validDigestID is DigestAuthenticationProvider.isValid: Java's
// id.split(":").length == 2, where split drops trailing empty strings.
func validDigestID(id string) bool {
	s := strings.TrimRight(id, ":")
	if s == "" {
		// "" splits to [""] (length 1); ":::" to [] (length 0).
		return false
	}
	return strings.Count(s, ":") == 1
}

// MaskDigests returns acl with every digest id shown as "user:x", as
// ZooKeeper's getACL does for a caller without ADMIN permission (Java's
// id.replaceAll(":.*", ":x"), where '.' stops at line terminators). acl
// itself is not modified; without digest entries it is returned as is.
func MaskDigests(acl []wire.ACL) []wire.ACL {
	var out []wire.ACL
	for i := range acl {
		if acl[i].ID.Scheme != SchemeDigest {
			continue
		}
		if out == nil {
			out = make([]wire.ACL, len(acl))
			copy(out, acl)
		}
		out[i].ID.ID = maskDigest(acl[i].ID.ID)
	}
	if out == nil {
		return acl
	}
	return out
}

func maskDigest(id string) string {
	if !strings.Contains(id, ":") {
		return id
	}
	var b strings.Builder
	for i := 0; i < len(id); {
		if id[i] != ':' {
			b.WriteByte(id[i])
			i++
			continue
		}
		// ":.*" consumes up to (not including) the next line terminator.
		b.WriteString(":x")
		i++
		for i < len(id) {
			if n := lineTerminatorLen(id[i:]); n > 0 {
				break
			}
			i++
		}
	}
	return b.String()
}

// lineTerminatorLen reports the byte length of a Java regex line
// terminator (\n, \r, U+0085, U+2028, U+2029) at the start of s, or 0.
func lineTerminatorLen(s string) int {
	switch {
	case s[0] == '\n' || s[0] == '\r':
		return 1
	case strings.HasPrefix(s, "\u0085"):
		return 2
	case strings.HasPrefix(s, "\u2028"), strings.HasPrefix(s, "\u2029"):
		return 3
	}
	return 0
}

// ipMatches is IPAuthenticationProvider.matches(id, aclExpr): both sides
// IPv4, compared under the ACL's prefix length.
func ipMatches(id, aclExpr string) bool {
	aclAddr, bits, ok := parseIPACL(aclExpr)
	if !ok {
		return false
	}
	addr, ok := parseIPv4(id)
	if !ok {
		return false
	}
	mask := uint32(0)
	if bits > 0 {
		mask = ^uint32(0) << (32 - bits)
	}
	return addr&mask == aclAddr&mask
}

// parseIPACL parses "a.b.c.d" or "a.b.c.d/bits" as IPAuthenticationProvider
// does (Java's split("/", 2) and Integer.parseInt).
func parseIPACL(s string) (addr uint32, bits int, ok bool) {
	a, b, hasBits := strings.Cut(s, "/")
	addr, ok = parseIPv4(a)
	if !ok {
		return 0, 0, false
	}
	bits = 32
	if hasBits {
		n, ok := javaParseInt(b)
		if !ok || n < 0 || n > 32 {
			return 0, 0, false
		}
		bits = int(n)
	}
	return addr, bits, true
}

// parseIPv4 is IPAuthenticationProvider.v4addr2Bytes: exactly four
// '.'-separated parts, each a Java int in 0..255 ("+1", "007" and "-0"
// are accepted, as Java accepts them).
func parseIPv4(s string) (uint32, bool) {
	var addr uint32
	for part := 0; part < 4; part++ {
		var field string
		if part < 3 {
			i := strings.IndexByte(s, '.')
			if i < 0 {
				return 0, false
			}
			field, s = s[:i], s[i+1:]
		} else {
			if strings.IndexByte(s, '.') >= 0 {
				return 0, false
			}
			field = s
		}
		v, ok := javaParseInt(field)
		if !ok || v < 0 || v > 255 {
			return 0, false
		}
		addr = addr<<8 | uint32(v)
	}
	return addr, true
}

// javaParseInt accepts what Integer.parseInt accepts for ASCII input: an
// optional sign and one or more decimal digits, within int32.
func javaParseInt(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+', '-':
		neg = s[0] == '-'
		s = s[1:]
		if s == "" {
			return 0, false
		}
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v > 1<<31 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	if v > 1<<31-1 || v < -1<<31 {
		return 0, false
	}
	return v, true
}
