package stats

import (
	"errors"
	"fmt"
	"math"
)

// The Universal Scalability Law (Gunther) models the throughput of N
// units of concurrency (here: N servers with proportionally many
// clients) as
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// λ is the coefficient of performance (the throughput of one unit without
// contention), σ the serialization (contention) coefficient: the share of
// the work that waits its turn, and κ the crosstalk (coherency) penalty:
// the pairwise exchanges that make throughput fall past a peak. σ = κ = 0
// is linear scaling, κ = 0 is Amdahl's law.

// USLPoint is one measurement: throughput X at concurrency N.
type USLPoint struct {
	N float64 `json:"n"`
	X float64 `json:"x"`
}

// USLParams are the model's coefficients.
type USLParams struct {
	Lambda float64 `json:"lambda"`
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
}

// Predict is X(n) under the model; 0 where the denominator is not
// positive (outside the model's domain).
func (p USLParams) Predict(n float64) float64 {
	d := 1 + p.Sigma*(n-1) + p.Kappa*n*(n-1)
	if d <= 0 {
		return 0
	}
	return p.Lambda * n / d
}

// USLFit is the least-squares fit of the model to measurements.
type USLFit struct {
	USLParams
	// SSE is the sum of squared residuals, R2 the coefficient of
	// determination 1 − SSE/SST (1 when the points have no spread and
	// the fit is exact, 0 when they have none and it is not).
	SSE    float64 `json:"sse"`
	R2     float64 `json:"r2"`
	Points int     `json:"points"`
	// PeakN is N* = sqrt((1−σ)/κ), where throughput peaks, and PeakX the
	// fitted throughput there; both 0 when the fit has no peak (κ = 0:
	// throughput rises towards λ/σ, or forever if σ = 0 too; or σ ≥ 1:
	// nothing is gained past N = 1).
	PeakN float64 `json:"peak_n"`
	PeakX float64 `json:"peak_x"`
	// Unconstrained is the least-squares fit with σ and κ free to go
	// negative, which the model does not allow (a negative κ would be
	// superlinear scaling); reported so a reader can see what was clamped.
	// Nil if that fit failed.
	Unconstrained *USLUnconstrained `json:"unconstrained,omitempty"`
}

// USLUnconstrained is a fit without the model's sign constraints.
type USLUnconstrained struct {
	USLParams
	SSE float64 `json:"sse"`
}

// Errors of FitUSL.
var (
	// ErrUSLTooFewPoints: the model has three coefficients, so the fit
	// needs points at three distinct N at least.
	ErrUSLTooFewPoints = errors.New("bench: USL fit needs points at 3 distinct N at least")
	// ErrUSLBadPoint: N must be positive and finite, X finite and not
	// negative.
	ErrUSLBadPoint = errors.New("bench: USL fit: bad point")
	// ErrUSLNoThroughput: every X is 0.
	ErrUSLNoThroughput = errors.New("bench: USL fit: no throughput measured")
)

// FitUSL fits λ, σ and κ to the points by nonlinear least squares under
// the model's constraints σ ≥ 0 and κ ≥ 0 (λ ≥ 0 follows from X ≥ 0).
//
// The constrained minimum lies on one of four faces of the feasible
// region: both coefficients free, σ = 0, κ = 0, or both 0. FitUSL finds
// the unconstrained minimum on each face with Levenberg–Marquardt and
// keeps the best one that is feasible; the face with both at 0 (linear
// scaling, solved in closed form) always is, so there is always an answer
// for valid input.
func FitUSL(points []USLPoint) (USLFit, error) {
	distinct := map[float64]bool{}
	anyX := false
	for _, p := range points {
		if !(p.N > 0) || math.IsInf(p.N, 0) || !(p.X >= 0) || math.IsInf(p.X, 0) {
			return USLFit{}, fmt.Errorf("%w: N=%v X=%v", ErrUSLBadPoint, p.N, p.X)
		}
		distinct[p.N] = true
		anyX = anyX || p.X > 0
	}
	if len(distinct) < 3 {
		return USLFit{}, fmt.Errorf("%w (got %d)", ErrUSLTooFewPoints, len(distinct))
	}
	if !anyX {
		return USLFit{}, ErrUSLNoThroughput
	}

	nMax := 0.0
	for _, p := range points {
		nMax = max(nMax, p.N)
	}
	// A coefficient whose term changes the denominator by less than a
	// billionth over the measured N is rounding, not a finding: it is
	// taken as 0 (so an exact Amdahl curve gets κ = 0, not 1e-17 and a
	// peak at N = 10⁸).
	negligible := func(j int, v float64) bool {
		if j == 1 {
			return math.Abs(v)*(nMax-1) < 1e-9
		}
		return math.Abs(v)*nMax*(nMax-1) < 1e-9
	}

	faces := [][3]bool{{true, true, true}, {true, false, true}, {true, true, false}, {true, false, false}}
	var best [3]float64
	bestSSE := math.Inf(1)
	var unc *USLUnconstrained
	for i, free := range faces {
		p, sse, ok := fitFace(points, free)
		if !ok {
			continue
		}
		if i == 0 {
			unc = &USLUnconstrained{USLParams: USLParams{Lambda: p[0], Sigma: p[1], Kappa: p[2]}, SSE: sse}
		}
		feasible := true
		for j := 1; j < 3; j++ {
			switch {
			case negligible(j, p[j]):
				p[j] = 0
			case p[j] < 0:
				feasible = false
			}
		}
		if !feasible {
			continue
		}
		p[0] = bestLambda(points, p[1], p[2])
		if sse = uslSSE(points, p); sse < bestSSE {
			best, bestSSE = p, sse
		}
	}
	if math.IsInf(bestSSE, 1) {
		// Unreachable for valid input: the linear face is feasible.
		return USLFit{}, errors.New("bench: USL fit did not converge")
	}
	fit := USLFit{USLParams: USLParams{Lambda: best[0], Sigma: best[1], Kappa: best[2]}, SSE: bestSSE,
		Points: len(points), Unconstrained: unc}
	var mean float64
	for _, p := range points {
		mean += p.X
	}
	mean /= float64(len(points))
	var sst float64
	for _, p := range points {
		sst += (p.X - mean) * (p.X - mean)
	}
	switch {
	case sst > 0:
		fit.R2 = 1 - bestSSE/sst
	case bestSSE == 0:
		fit.R2 = 1
	}
	if fit.Kappa > 0 && fit.Sigma < 1 {
		fit.PeakN = math.Sqrt((1 - fit.Sigma) / fit.Kappa)
		fit.PeakX = fit.Predict(fit.PeakN)
	}
	return fit, nil
}

// uslSSE is the sum of squared residuals of p = (λ, σ, κ); +Inf where the
// model's denominator is not positive at some point.
func uslSSE(points []USLPoint, p [3]float64) float64 {
	var s float64
	for _, pt := range points {
		d := 1 + p[1]*(pt.N-1) + p[2]*pt.N*(pt.N-1)
		if !(d > 0) {
			return math.Inf(1)
		}
		r := pt.X - p[0]*pt.N/d
		s += r * r
	}
	if math.IsNaN(s) {
		return math.Inf(1)
	}
	return s
}

// bestLambda is the λ that minimises the squared residuals for fixed σ
// and κ: the model is linear in λ.
func bestLambda(points []USLPoint, sigma, kappa float64) float64 {
	var num, den float64
	for _, pt := range points {
		d := 1 + sigma*(pt.N-1) + kappa*pt.N*(pt.N-1)
		if !(d > 0) {
			continue
		}
		g := pt.N / d
		num += pt.X * g
		den += g * g
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// fitFace minimises the squared residuals over the coefficients marked
// Free (λ always is), the others held at 0, from two starting points; it
// reports false if neither start gave a finite fit.
func fitFace(points []USLPoint, free [3]bool) ([3]float64, float64, bool) {
	var best [3]float64
	bestSSE := math.Inf(1)
	starts := [][3]float64{linearizedStart(points, free)}
	// A second start from near linear scaling guards against a poor
	// linearization (noisy or missing small-N points).
	small := [3]float64{0, 0.01, 0.0001}
	for j := 1; j < 3; j++ {
		if !free[j] {
			small[j] = 0
		}
	}
	small[0] = bestLambda(points, small[1], small[2])
	starts = append(starts, small)
	for _, s := range starts {
		p, sse := levenbergMarquardt(points, s, free)
		if sse < bestSSE {
			best, bestSSE = p, sse
		}
	}
	return best, bestSSE, !math.IsInf(bestSSE, 1)
}

// linearizedStart estimates σ and κ from the USL's linear form: with
// C(N) = X(N)/λ, N/C(N) − 1 = σ(N−1) + κN(N−1), a linear least-squares
// problem once λ is guessed. λ is guessed from the points at the smallest
// N, then refit for the σ and κ found.
func linearizedStart(points []USLPoint, free [3]bool) [3]float64 {
	nMin := math.Inf(1)
	for _, p := range points {
		nMin = min(nMin, p.N)
	}
	var sum float64
	var cnt int
	for _, p := range points {
		if p.N == nMin {
			sum += p.X
			cnt++
		}
	}
	lambda0 := sum / float64(cnt) / nMin
	var s [3]float64
	if lambda0 > 0 {
		// Normal equations of y = a·u + b·v over the free columns.
		var uu, uv, vv, uy, vy float64
		for _, p := range points {
			if p.X <= 0 {
				continue
			}
			y := lambda0*p.N/p.X - 1
			u, v := p.N-1, p.N*(p.N-1)
			uu += u * u
			uv += u * v
			vv += v * v
			uy += u * y
			vy += v * y
		}
		switch {
		case free[1] && free[2]:
			if det := uu*vv - uv*uv; det != 0 {
				s[1] = (uy*vv - vy*uv) / det
				s[2] = (uu*vy - uv*uy) / det
			}
		case free[1] && uu != 0:
			s[1] = uy / uu
		case free[2] && vv != 0:
			s[2] = vy / vv
		}
	}
	if math.IsInf(uslSSE(points, s), 1) {
		// The linearization left the model's domain; start from linear.
		s[1], s[2] = 0, 0
	}
	s[0] = bestLambda(points, s[1], s[2])
	return s
}

// levenbergMarquardt minimises the squared residuals over the free
// coefficients from start, with Marquardt's scaling of the damping by the
// diagonal (λ is in the thousands, κ in the thousandths). It returns the
// best point found and its SSE (+Inf if start is outside the domain).
func levenbergMarquardt(points []USLPoint, start [3]float64, free [3]bool) ([3]float64, float64) {
	var idx []int
	for j, f := range free {
		if f {
			idx = append(idx, j)
		}
	}
	p := start
	sse := uslSSE(points, p)
	if math.IsInf(sse, 1) {
		return p, sse
	}
	mu := 1e-3
	const maxIter = 500
	for range maxIter {
		// Gradient of the model at each point, for the free coefficients.
		var a [3][3]float64
		var g [3]float64
		for _, pt := range points {
			n := pt.N
			d := 1 + p[1]*(n-1) + p[2]*n*(n-1)
			f := p[0] * n / d
			r := pt.X - f
			grad := [3]float64{n / d, -p[0] * n * (n - 1) / (d * d), -p[0] * n * n * (n - 1) / (d * d)}
			for x, jx := range idx {
				g[x] += grad[jx] * r
				for y, jy := range idx {
					a[x][y] += grad[jx] * grad[jy]
				}
			}
		}
		improved := false
		var step [3]float64
		for mu <= 1e16 {
			var b [3][3]float64
			for x := range idx {
				for y := range idx {
					b[x][y] = a[x][y]
				}
				b[x][x] += mu * max(a[x][x], 1e-300)
			}
			delta, ok := solveSmall(b, g, len(idx))
			if !ok {
				mu *= 10
				continue
			}
			next := p
			for x, j := range idx {
				next[j] += delta[x]
			}
			if s := uslSSE(points, next); s < sse {
				for x := range idx {
					step[x] = delta[x]
				}
				p, sse = next, s
				mu = max(mu/10, 1e-12)
				improved = true
				small := true
				for x, j := range idx {
					if math.Abs(step[x]) > 1e-12*(math.Abs(p[j])+1e-12) {
						small = false
					}
				}
				if small || sse == 0 {
					return p, sse
				}
				break
			}
			mu *= 10
		}
		if !improved {
			// No step along the damped gradient lowers the SSE: a minimum
			// to machine precision.
			return p, sse
		}
	}
	return p, sse
}

// solveSmall solves the n×n (n ≤ 3) system b·x = g by Gaussian
// elimination with partial pivoting; false if it is singular.
func solveSmall(b [3][3]float64, g [3]float64, n int) ([3]float64, bool) {
	var x [3]float64
	for c := range n {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(b[r][c]) > math.Abs(b[piv][c]) {
				piv = r
			}
		}
		if b[piv][c] == 0 || math.IsNaN(b[piv][c]) {
			return x, false
		}
		b[c], b[piv] = b[piv], b[c]
		g[c], g[piv] = g[piv], g[c]
		for r := c + 1; r < n; r++ {
			f := b[r][c] / b[c][c]
			for k := c; k < n; k++ {
				b[r][k] -= f * b[c][k]
			}
			g[r] -= f * g[c]
		}
	}
	for r := n - 1; r >= 0; r-- {
		s := g[r]
		for k := r + 1; k < n; k++ {
			s -= b[r][k] * x[k]
		}
		x[r] = s / b[r][r]
		if math.IsNaN(x[r]) || math.IsInf(x[r], 0) {
			return x, false
		}
	}
	return x, true
}
