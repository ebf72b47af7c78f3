package flw

import (
	"math"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York on machines without a zoneinfo database
)

// Expected strings are what OpenJDK 17's Double.toString prints, except
// where noted.
func TestFormatDouble(t *testing.T) {
	point1, point2 := 0.1, 0.2 // variables: a constant 0.1+0.2 is exactly 0.3
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1.5, "1.5"},
		{1.0 / 3, "0.3333333333333333"},
		{2.0 / 3, "0.6666666666666666"},
		{0.3333, "0.3333"},
		{8.5294, "8.5294"},
		{1.2885, "1.2885"},
		{18.6667, "18.6667"},
		{71.125, "71.125"},
		{100, "100.0"},
		{14, "14.0"},
		{point1 + point2, "0.30000000000000004"},
		{12345.678, "12345.678"},
		{9999999.999, "9999999.999"},
		{1e7, "1.0E7"},
		{123456789, "1.23456789E8"},
		{17636684.1429, "1.76366841429E7"},
		{1e-3, "0.001"},
		{2e-3, "0.002"},
		{0.00099, "9.9E-4"},
		{1e-4, "1.0E-4"},
		{1e-5, "1.0E-5"},
		{1e-7, "1.0E-7"},
		{1e21, "1.0E21"},
		{1e22, "1.0E22"},
		{-8.5294, "-8.5294"},
		{-1e7, "-1.0E7"},
		{5e-324, "4.9E-324"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{2.2250738585072014e-308, "2.2250738585072014E-308"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		// JDK 19+; JDK 17 prints 9.999999999999999E22 and
		// 2.82879384806159008E17 for these two.
		{1e23, "1.0E23"},
		{2.82879384806159e17, "2.82879384806159E17"},
	}
	for _, tc := range tests {
		if got := FormatDouble(tc.f); got != tc.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

// Expected values are OpenJDK's new BigDecimal(total/count).setScale(4,
// HALF_UP).doubleValue(), i.e. AvgMinMaxCounter.getAvg.
func TestRoundAvg(t *testing.T) {
	tests := []struct {
		total, count int64
		want         string
	}{
		{1, 3, "0.3333"},
		{2, 3, "0.6667"},
		{290, 34, "8.5294"},
		{1, 32, "0.0313"}, // an exact tie: HALF_UP, not half-even
		{-1, 32, "-0.0313"},
		{112, 6, "18.6667"},
		{569, 8, "71.125"},
		{5, 8, "0.625"},
		{7, 3, "2.3333"},
		{1, 20000, "1.0E-4"},
		{3, 20000, "1.0E-4"}, // 0.00015 is just below the tie as a double
		{123456789, 7, "1.76366841429E7"},
		{0, 0, "0.0"},
		{10, 0, "0.0"},
		{-1, 3, "-0.3333"},
		{99999, 100000, "1.0"},
		{1, 1000000, "0.0"},
		{-1, 1000000, "0.0"}, // BigDecimal has no negative zero
	}
	for _, tc := range tests {
		if got := FormatDouble(RoundAvg(tc.total, tc.count)); got != tc.want {
			t.Errorf("RoundAvg(%d, %d) prints %q, want %q", tc.total, tc.count, got, tc.want)
		}
	}
	// Rounding is idempotent, so Render may round what the server rounded.
	for _, tc := range tests {
		r := RoundAvg(tc.total, tc.count)
		if again := round4(r); again != r {
			t.Errorf("round4(%v) = %v", r, again)
		}
	}
}

func TestJavaHex(t *testing.T) {
	for v, want := range map[int64]string{
		0: "0", 6: "6", 0x139: "139", -1: "ffffffffffffffff",
		0x100000772ee0001: "100000772ee0001", math.MinInt64: "8000000000000000",
	} {
		if got := javaHex(v); got != want {
			t.Errorf("javaHex(%d) = %q, want %q", v, got, want)
		}
	}
}

// Expected strings are OpenJDK 17's InetSocketAddress.toString.
func TestJavaSocketAddress(t *testing.T) {
	tests := map[string]string{
		"127.0.0.1:46824":      "/127.0.0.1:46824",
		"10.42.45.231:45361":   "/10.42.45.231:45361",
		"[::1]:5":              "/[0:0:0:0:0:0:0:1]:5",
		"[fe80::1:2%1]:5":      "/[fe80:0:0:0:0:0:1:2%1]:5",
		"[::ffff:10.0.0.1]:5":  "/10.0.0.1:5",
		"[2001:db8::ab:0:1]:5": "/[2001:db8:0:0:0:ab:0:1]:5",
		"[2001:DB8::1]:5":      "/[2001:db8:0:0:0:0:0:1]:5",
		"/127.0.0.1:1":         "/127.0.0.1:1",
		"localhost:2181":       "/localhost:2181",
		"not an address":       "/not an address",
	}
	for in, want := range tests {
		if got := JavaSocketAddress(in); got != want {
			t.Errorf("JavaSocketAddress(%q) = %q, want %q", in, got, want)
		}
	}
}

// Expected strings are OpenJDK 17's new Date(ms).toString() with the
// default time zone set accordingly.
func TestJavaDate(t *testing.T) {
	const ms = 1795314575341
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ms   int64
		loc  *time.Location
		want string
	}{
		{ms, nil, "Sun Nov 22 02:29:35 UTC 2026"},
		{ms, time.UTC, "Sun Nov 22 02:29:35 UTC 2026"},
		{ms, kolkata, "Sun Nov 22 07:59:35 IST 2026"},
		{ms, time.FixedZone("", 5*3600+30*60), "Sun Nov 22 07:59:35 GMT+05:30 2026"},
		{ms, time.FixedZone("", -3*3600), "Sat Nov 21 23:29:35 GMT-03:00 2026"},
		{ms, time.FixedZone("", 0), "Sun Nov 22 02:29:35 GMT 2026"},
		{ms, ny, "Sat Nov 21 21:29:35 EST 2026"},
		{1, ny, "Wed Dec 31 19:00:00 EST 1969"},
		{utcMillis(2026, time.March, 1, 0, 0, 0), nil, "Sun Mar 01 00:00:00 UTC 2026"},
	}
	for _, tc := range tests {
		if got := JavaDate(tc.ms, tc.loc); got != tc.want {
			t.Errorf("JavaDate(%d, %v) = %q, want %q", tc.ms, tc.loc, got, tc.want)
		}
	}
}
