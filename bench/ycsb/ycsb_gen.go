package ycsb

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// The YCSB generators: what YCSB's CoreWorkload draws keys, operations and
// scan lengths from, written to match its Java sources (site.ycsb.generator)
// draw for draw, except where a comment says otherwise.
//
// Why not github.com/pingcap/go-ycsb/pkg/generator: it was evaluated
// (v1.0.1, the newest the module proxy serves). Importing it pulls in
// go-ycsb's pkg/util, pkg/prop and pkg/ycsb and through them five modules
// that have nothing to do with drawing numbers (olekukonko/tablewriter,
// mattn/go-runewidth, magiconair/properties, pingcap/errors,
// go.uber.org/atomic): 6 more go.mod lines and 23 more go.sum lines for
// about 200 lines of arithmetic. It also does not fit the package's rules:
// its AcknowledgedCounter panics when 2^20 inserts are unacknowledged, its
// generators store their last value in a plain int64 that Next writes (a
// data race when threads share one, which "latest" needs for its basis),
// and its constructors draw from a time-seeded source. What YCSB's core
// workloads need is short, so it is here, with every draw from a
// caller-supplied *rand.Rand so that tests are deterministic.

// ycsbZipfTheta is YCSB's zipfian constant (ZipfianGenerator.ZIPFIAN_CONSTANT).
const ycsbZipfTheta = 0.99

// zipfian draws integers from [base, base+items) with item base the most
// popular, then base+1, ...: the algorithm of Gray et al., "Quickly
// Generating Billion-Record Synthetic Databases" (SIGMOD 1994), as YCSB's
// ZipfianGenerator implements it. The popular items are clustered at the
// low end; scrambledZipfian spreads them over the key space. A zipfian is
// used by one goroutine.
type zipfian struct {
	base                int64
	theta, alpha        float64
	zeta2, zetan, eta   float64
	half                float64 // 0.5^theta: where item base+1 ends
	countForZeta, items int64
}

// newZipfian returns a zipfian over [lo, hi] with exponent theta,
// computing zeta(n, theta) (O(n)).
func newZipfian(lo, hi int64, theta float64) *zipfian {
	return newZipfianZetan(lo, hi, theta, zetaSum(0, hi-lo+1, theta, 0))
}

// newZipfianZetan is newZipfian with zeta(hi-lo+1, theta) given.
func newZipfianZetan(lo, hi int64, theta, zetan float64) *zipfian {
	n := max(hi-lo+1, 1)
	z := &zipfian{
		base: lo, theta: theta, alpha: 1 / (1 - theta),
		zeta2: zetaSum(0, 2, theta, 0), zetan: zetan,
		half: math.Pow(0.5, theta), countForZeta: n, items: n,
	}
	z.setEta(n)
	return z
}

// zetaSum adds 1/i^theta for i in (from, to] to initial: zeta(to, theta)
// when from is 0 and initial 0, or extended incrementally from zeta(from).
func zetaSum(from, to int64, theta, initial float64) float64 {
	sum := initial
	for i := from; i < to; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// setEta computes Gray et al.'s eta for n items. YCSB recomputes eta with
// the item count of construction even after the count grew (a slip in its
// nextLong); this uses the current count, as the paper's formula says. The
// two differ only for "latest", and there by a factor (2/n)^0.01 close to 1.
func (z *zipfian) setEta(n int64) {
	z.eta = (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - z.zeta2/z.zetan)
}

// next draws from the items given at construction.
func (z *zipfian) next(r *rand.Rand) int64 { return z.nextN(r, z.items) }

// nextN draws from [base, base+n). A larger n than before extends zeta
// incrementally (cheap for the few keys a run inserts); a smaller one is
// drawn with the larger zeta, as YCSB does when it is not allowed to
// shrink.
func (z *zipfian) nextN(r *rand.Rand, n int64) int64 {
	if n > z.countForZeta {
		z.zetan = zetaSum(z.countForZeta, n, z.theta, z.zetan)
		z.countForZeta = n
		z.setEta(n)
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+z.half {
		return z.base + 1
	}
	// u close to 1 gives n itself in YCSB's formula, one past the range:
	// clamped.
	k := int64(float64(n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return z.base + min(max(k, 0), n-1)
}

// YCSB's scrambled zipfian draws from a zipfian over 10^10 items whose
// zeta it has precomputed, and hashes the draw into the key space.
const (
	ycsbScrambledItems = 10_000_000_000
	ycsbScrambledZetan = 26.46902820178302 // zeta(10^10, 0.99)
)

// scrambledZipfian is YCSB's ScrambledZipfianGenerator: zipfian popularity
// (theta 0.99), with the popular items scattered over [lo, hi] by
// fnvhash64 rather than clustered at the low end. Because 10^10 ranks are folded
// onto the key space, the most popular key has probability about
// 1/zeta(10^10) ≈ 3.8% whatever the key count, and every key also gets a
// share of the long tail.
type scrambledZipfian struct {
	z          *zipfian
	min, count int64
}

func newScrambledZipfian(lo, hi int64) *scrambledZipfian {
	return &scrambledZipfian{
		z:   newZipfianZetan(0, ycsbScrambledItems, ycsbZipfTheta, ycsbScrambledZetan),
		min: lo, count: max(hi-lo+1, 1),
	}
}

func (s *scrambledZipfian) next(r *rand.Rand) int64 {
	return s.min + fnvhash64(s.z.next(r))%s.count
}

// fnvhash64 is YCSB's Utils.fnvhash64: FNV-1a over the value's eight bytes,
// low byte first, made non-negative with abs. Key names and the scrambled
// zipfian both use it. (Java's abs leaves Long.MIN_VALUE negative; here it
// becomes MaxInt64, so the result is always a valid modulus operand.)
func fnvhash64(v int64) int64 {
	const (
		offset = 0xCBF29CE484222325
		prime  = 1099511628211
	)
	h := uint64(offset)
	u := uint64(v)
	for range 8 {
		h ^= u & 0xff
		u >>= 8
		h *= prime
	}
	s := int64(h)
	switch {
	case s == math.MinInt64:
		return math.MaxInt64
	case s < 0:
		return -s
	}
	return s
}

// uniformInt draws uniformly from [lo, hi] (YCSB's UniformLongGenerator).
type uniformInt struct{ lo, n int64 }

func newUniformInt(lo, hi int64) uniformInt { return uniformInt{lo: lo, n: max(hi-lo+1, 1)} }

func (u uniformInt) next(r *rand.Rand) int64 { return u.lo + r.Int64N(u.n) }

// ackCounter is YCSB's AcknowledgedCounterGenerator, the insert key
// sequence: take hands out the next key to insert, ack records that the
// insert finished, and last is the highest key below which every key has
// been acknowledged. Keys chosen for reads never pass last, so a thread
// never reads a record whose insert is still in flight. It is shared by
// all threads. Unlike YCSB's it has no fixed window that can overflow:
// the keys acknowledged out of order wait in a set, which holds at most one
// key per thread (a thread has one insert outstanding).
type ackCounter struct {
	next  atomic.Int64
	limit atomic.Int64

	mu      sync.Mutex
	pending map[int64]struct{}
}

// newAckCounter starts the sequence at start: keys below it exist.
func newAckCounter(start int64) *ackCounter {
	a := &ackCounter{pending: map[int64]struct{}{}}
	a.next.Store(start)
	a.limit.Store(start - 1)
	return a
}

func (a *ackCounter) take() int64 { return a.next.Add(1) - 1 }

func (a *ackCounter) last() int64 { return a.limit.Load() }

// ack marks key k's insert done, whether it succeeded or not (YCSB
// acknowledges in a finally block; a failed insert leaves a key that reads
// answer NoNode).
func (a *ackCounter) ack(k int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	limit := a.limit.Load()
	if k <= limit {
		return
	}
	if k != limit+1 {
		a.pending[k] = struct{}{}
		return
	}
	limit = k
	for {
		if _, ok := a.pending[limit+1]; !ok {
			break
		}
		delete(a.pending, limit+1)
		limit++
	}
	a.limit.Store(limit)
}

// skewedLatest is YCSB's SkewedLatestGenerator, the "latest" request
// distribution: zipfian over how recently a key was inserted, so the
// newest acknowledged key is the most popular, the one before it next,
// and so on. YCSB draws over last keys and so never picks key 0; this
// draws over the last+1 keys that exist.
type skewedLatest struct {
	basis *ackCounter
	z     *zipfian
}

func newSkewedLatest(basis *ackCounter) *skewedLatest {
	n := max(basis.last()+1, 1)
	return &skewedLatest{basis: basis, z: newZipfian(0, n-1, ycsbZipfTheta)}
}

func (s *skewedLatest) next(r *rand.Rand) int64 {
	last := s.basis.last()
	return last - s.z.nextN(r, max(last+1, 1))
}

// discrete picks one of a few outcomes with fixed weights (YCSB's
// DiscreteGenerator, which the operation chooser is).
type discrete struct {
	weights []float64
	sum     float64
}

func (d *discrete) add(w float64) {
	d.weights = append(d.weights, w)
	d.sum += w
}

// next returns the index of the outcome drawn.
func (d *discrete) next(r *rand.Rand) int {
	u := r.Float64() * d.sum
	for i, w := range d.weights {
		if u < w {
			return i
		}
		u -= w
	}
	// Rounding can leave u at the very top: the last outcome with weight.
	for i := len(d.weights) - 1; i > 0; i-- {
		if d.weights[i] > 0 {
			return i
		}
	}
	return 0
}
