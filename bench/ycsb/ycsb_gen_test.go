package ycsb

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

const ycsbDraws = 200_000

func testRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.5f, want %.5f ± %.5f", what, got, want, tol)
	}
}

// Gray et al.'s algorithm gives item 0 exactly probability 1/zeta(n) and
// item 1 exactly 0.5^theta/zeta(n); the rest it approximates with a
// continuous inverse, whose cumulative mass must track the exact zipf
// law's. The approximation itself puts up to about 0.017 too much mass on
// the head at n = 100 (items 2 to 10), hence the cumulative tolerance;
// sampling error is about 0.001.
func TestZipfianMatchesTheory(t *testing.T) {
	const n = 100
	z := newZipfian(0, n-1, ycsbZipfTheta)
	r := testRand(1)
	counts := make([]int, n)
	for range ycsbDraws {
		k := z.next(r)
		if k < 0 || k >= n {
			t.Fatalf("draw %d outside [0, %d)", k, n)
		}
		counts[k]++
	}
	zeta := zetaSum(0, n, ycsbZipfTheta, 0)
	p0 := 1 / zeta
	p1 := math.Pow(0.5, ycsbZipfTheta) / zeta
	// Relative error bounds: about 5 standard deviations of a binomial
	// proportion at these sample sizes.
	if got := float64(counts[0]) / ycsbDraws; math.Abs(got-p0)/p0 > 0.025 {
		t.Errorf("P(rank 1) = %.4f, theory %.4f", got, p0)
	}
	if got := float64(counts[1]) / ycsbDraws; math.Abs(got-p1)/p1 > 0.035 {
		t.Errorf("P(rank 2) = %.4f, theory %.4f", got, p1)
	}
	for _, k := range []int{5, 10, 30, 60} {
		var got float64
		for i := range k {
			got += float64(counts[i])
		}
		within(t, "P(rank <= "+strconv.Itoa(k)+")", got/ycsbDraws, zetaSum(0, int64(k), ycsbZipfTheta, 0)/zeta, 0.025)
	}
	// Skewed, and monotone at the head.
	if !(counts[0] > counts[1] && counts[1] > counts[2] && counts[2] > counts[n-1]*5) {
		t.Errorf("not skewed: counts %v ... %d", counts[:4], counts[n-1])
	}
}

// Growing the item count extends zeta incrementally to exactly the sum a
// fresh generator computes.
func TestZipfianGrowsIncrementally(t *testing.T) {
	z := newZipfian(0, 99, ycsbZipfTheta)
	r := testRand(2)
	for _, n := range []int64{150, 1000, 1001} {
		k := z.nextN(r, n)
		if k < 0 || k >= n {
			t.Fatalf("draw %d outside [0, %d)", k, n)
		}
		want := zetaSum(0, n, ycsbZipfTheta, 0)
		if math.Abs(z.zetan-want) > 1e-9 {
			t.Errorf("n=%d: zeta %.12f, want %.12f", n, z.zetan, want)
		}
	}
}

// YCSB's key names: user followed by fnvhash64 of the record number. The
// first is the familiar user6284781860667377211.
func TestFnvhash64IsYCSBs(t *testing.T) {
	for i, want := range []int64{6284781860667377211, 8517097267634966620, 1820151046732198393, 4052466453699787802} {
		if got := fnvhash64(int64(i)); got != want {
			t.Errorf("fnvhash64(%d) = %d, want %d", i, got, want)
		}
	}
	for _, v := range []int64{-1, math.MinInt64, math.MaxInt64, 1 << 40} {
		if fnvhash64(v) < 0 {
			t.Errorf("fnvhash64(%d) negative", v)
		}
	}
}

// The scrambled zipfian folds 10^10 zipfian ranks onto the key space: the
// top key is fnvhash64(0) mod n with about 1/zeta(10^10) of the draws
// (plus its share of the tail), the second fnvhash64(1) mod n, and the
// popular keys are scattered, not clustered at 0.
func TestScrambledZipfianSkew(t *testing.T) {
	const n = 1000
	s := newScrambledZipfian(0, n-1)
	r := testRand(3)
	counts := make([]int, n)
	for range ycsbDraws {
		k := s.next(r)
		if k < 0 || k >= n {
			t.Fatalf("draw %d outside [0, %d)", k, n)
		}
		counts[k]++
	}
	top, second := fnvhash64(0)%n, fnvhash64(1)%n
	p0 := 1 / ycsbScrambledZetan
	p1 := math.Pow(0.5, ycsbZipfTheta) / ycsbScrambledZetan
	// The tail adds roughly (1 - zeta(n)/zeta(10^10))/n to every key.
	tail := (1 - zetaSum(0, n, ycsbZipfTheta, 0)/ycsbScrambledZetan) / n
	within(t, "P(top key)", float64(counts[top])/ycsbDraws, p0+tail, 0.003)
	within(t, "P(second key)", float64(counts[second])/ycsbDraws, p1+tail, 0.002)
	for k, c := range counts {
		if int64(k) != top && c > counts[top] {
			t.Errorf("key %d drawn %d times, more than the top key %d (%d)", k, c, top, counts[top])
		}
	}
	if top < 10 && second < 10 {
		t.Errorf("popular keys %d and %d clustered at the low end", top, second)
	}
}

// chiSquare is Pearson's statistic of counts against equal expectation.
func chiSquare(counts []int, total int) float64 {
	exp := float64(total) / float64(len(counts))
	var x float64
	for _, c := range counts {
		d := float64(c) - exp
		x += d * d / exp
	}
	return x
}

// 148.2 is the 0.999 quantile of chi-square with 99 degrees of freedom.
const chi2df99p999 = 148.2

func TestUniformIsUniform(t *testing.T) {
	u := newUniformInt(1000, 1099)
	r := testRand(4)
	counts := make([]int, 100)
	for range ycsbDraws {
		k := u.next(r)
		if k < 1000 || k > 1099 {
			t.Fatalf("draw %d outside [1000, 1099]", k)
		}
		counts[k-1000]++
	}
	if x := chiSquare(counts, ycsbDraws); x > chi2df99p999 {
		t.Errorf("chi-square %.1f > %.1f: not uniform", x, chi2df99p999)
	}
}

// "latest" favours the newest acknowledged insert, then the one before,
// and follows the inserts as they are acknowledged.
func TestSkewedLatestFavoursRecentInserts(t *testing.T) {
	const loaded, inserted = 10000, 100
	seq := newAckCounter(loaded)
	l := newSkewedLatest(seq)
	for range inserted {
		seq.ack(seq.take())
	}
	last := seq.last()
	if last != loaded+inserted-1 {
		t.Fatalf("last = %d, want %d", last, loaded+inserted-1)
	}
	r := testRand(5)
	counts := map[int64]int{}
	recent := 0
	for range ycsbDraws {
		k := l.next(r)
		if k < 0 || k > last {
			t.Fatalf("draw %d outside [0, %d]", k, last)
		}
		counts[k]++
		if k >= loaded {
			recent++
		}
	}
	zeta := zetaSum(0, last+1, ycsbZipfTheta, 0)
	within(t, "P(newest)", float64(counts[last])/ycsbDraws, 1/zeta, 0.004)
	// Gray's approximation again overweights the head by about 0.013.
	within(t, "P(one of the 100 inserted)", float64(recent)/ycsbDraws, zetaSum(0, inserted, ycsbZipfTheta, 0)/zeta, 0.025)
	if !(counts[last] > counts[last-1] && counts[last-1] > counts[last-2]) {
		t.Errorf("not most recent first: %d %d %d", counts[last], counts[last-1], counts[last-2])
	}
}

// Out-of-order acknowledgements hold last back until the gap closes.
func TestAckCounterOutOfOrder(t *testing.T) {
	a := newAckCounter(10)
	k0, k1, k2 := a.take(), a.take(), a.take()
	if k0 != 10 || k1 != 11 || k2 != 12 || a.last() != 9 {
		t.Fatalf("take %d %d %d, last %d", k0, k1, k2, a.last())
	}
	a.ack(k2)
	if a.last() != 9 {
		t.Errorf("after acking 12 alone: last %d, want 9", a.last())
	}
	a.ack(k0)
	if a.last() != 10 {
		t.Errorf("after acking 10: last %d, want 10", a.last())
	}
	a.ack(k1)
	if a.last() != 12 || len(a.pending) != 0 {
		t.Errorf("after acking all: last %d, pending %v", a.last(), a.pending)
	}
	a.ack(5) // already below last: no effect
	if a.last() != 12 {
		t.Errorf("stale ack moved last to %d", a.last())
	}
}

func TestDiscreteProportions(t *testing.T) {
	var d discrete
	for _, w := range []float64{0.5, 0, 0.3, 0.2} {
		d.add(w)
	}
	r := testRand(6)
	counts := make([]int, 4)
	for range ycsbDraws {
		counts[d.next(r)]++
	}
	if counts[1] != 0 {
		t.Errorf("zero-weight outcome drawn %d times", counts[1])
	}
	for i, w := range d.weights {
		within(t, "P(outcome "+strconv.Itoa(i)+")", float64(counts[i])/ycsbDraws, w, 0.005)
	}
}
