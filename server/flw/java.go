package flw

import (
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// FormatDouble is Java's Double.toString (the JDK 19+ specification, which
// asks for the shortest decimal that rounds to the double):
//
//	0.0  -0.0  1.5  100.0  0.3333  0.30000000000000004  0.001
//	9.9E-4  1.0E7  1.23456789E8  NaN  Infinity  4.9E-324
//
// Magnitudes in [1e-3, 1e7) print as plain decimals with at least one
// fractional digit, others as d.dddE<exp>. JDK 17 and older pick a longer
// string for a few doubles (1.0E23 prints 9.999999999999999E22 there); the
// values ZooKeeper prints, averages rounded to four places, are not among
// them.
func FormatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	var sb strings.Builder
	if f < 0 {
		sb.WriteByte('-')
		f = -f
	}
	digits, exp := shortestDigits(f)
	if f >= 1e-3 && f < 1e7 {
		if exp >= 0 {
			// Integer part: the first exp+1 digits, zero-padded.
			if len(digits) <= exp+1 {
				sb.WriteString(digits)
				sb.WriteString(strings.Repeat("0", exp+1-len(digits)))
				sb.WriteString(".0")
			} else {
				sb.WriteString(digits[:exp+1])
				sb.WriteByte('.')
				sb.WriteString(digits[exp+1:])
			}
		} else {
			sb.WriteString("0.")
			sb.WriteString(strings.Repeat("0", -exp-1))
			sb.WriteString(digits)
		}
		return sb.String()
	}
	sb.WriteByte(digits[0])
	sb.WriteByte('.')
	if len(digits) > 1 {
		sb.WriteString(digits[1:])
	} else {
		sb.WriteByte('0')
	}
	sb.WriteByte('E')
	sb.WriteString(strconv.Itoa(exp))
	return sb.String()
}

// shortestDigits returns the significant digits of positive finite f,
// without trailing zeros, and the decimal exponent of the first one
// (f = d.ddd × 10^exp). Like Java, a one-digit result is widened to the
// closest two-digit decimal that still rounds to f (so Double.MIN_VALUE is
// 4.9E-324, not 5E-324).
func shortestDigits(f float64) (string, int) {
	s := strconv.FormatFloat(f, 'e', -1, 64)
	if m, _, _ := strings.Cut(s, "e"); len(m) == 1 {
		if s2 := strconv.FormatFloat(f, 'e', 1, 64); parsesTo(s2, f) {
			s = s2
		}
	}
	mant, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	digits := strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	return digits, exp
}

func parsesTo(s string, f float64) bool {
	g, err := strconv.ParseFloat(s, 64)
	return err == nil && g == f
}

// javaHex is Long.toHexString: lower case, no padding, negative values as
// their two's complement (-1 is ffffffffffffffff).
func javaHex(v int64) string {
	return strconv.FormatUint(uint64(v), 16)
}

// JavaSocketAddress prints an "ip:port" address as Java's
// InetSocketAddress.toString does for an accepted socket (JDK 14+):
// "/127.0.0.1:46824", "/[0:0:0:0:0:0:0:1]:46824". IPv4-mapped IPv6
// addresses print as IPv4, as Java maps them to Inet4Address; IPv6
// addresses print all eight groups uncompressed. An address that already
// starts with "/" or does not parse is printed with a "/" prefix only.
func JavaSocketAddress(remote string) string {
	if strings.HasPrefix(remote, "/") {
		return remote
	}
	host, port, err := net.SplitHostPort(remote)
	if err != nil {
		return "/" + remote
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return "/" + host + ":" + port
	}
	if addr.Is4() || addr.Is4In6() {
		return "/" + addr.Unmap().String() + ":" + port
	}
	a := addr.As16()
	var sb strings.Builder
	sb.WriteString("/[")
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(a[i])<<8|uint64(a[i+1]), 16))
	}
	if z := addr.Zone(); z != "" {
		sb.WriteByte('%')
		sb.WriteString(z)
	}
	sb.WriteString("]:")
	sb.WriteString(port)
	return sb.String()
}

// JavaDate prints epoch milliseconds as java.util.Date.toString does in
// zone loc (nil means UTC): "Sun Nov 22 02:21:00 UTC 2026". A zone without
// an abbreviation prints as Java's custom zones do, "GMT+05:30".
func JavaDate(ms int64, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	t := time.UnixMilli(ms).In(loc)
	name, off := t.Zone()
	if name == "" || name[0] == '+' || name[0] == '-' {
		name = "GMT"
		if off != 0 {
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			name += string(sign) + twoDigits(off/3600) + ":" + twoDigits(off%3600/60)
		}
	}
	return t.Format("Mon Jan 02 15:04:05 ") + name + " " + strconv.Itoa(t.Year())
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
