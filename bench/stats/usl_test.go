package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func uslPoints(p USLParams, ns []float64, noise func(i int) float64) []USLPoint {
	pts := make([]USLPoint, len(ns))
	for i, n := range ns {
		x := p.Predict(n)
		if noise != nil {
			x *= 1 + noise(i)
		}
		pts[i] = USLPoint{N: n, X: x}
	}
	return pts
}

func TestFitUSLRecoversExactCoefficients(t *testing.T) {
	ns := []float64{1, 2, 3, 4, 6, 8}
	for _, tc := range []struct {
		name string
		p    USLParams
	}{
		{"contention and crosstalk", USLParams{Lambda: 1000, Sigma: 0.05, Kappa: 0.002}},
		// The study's first stage (Table 1).
		{"study stage 1", USLParams{Lambda: 2845.2309970244, Sigma: 0.2692010226, Kappa: 0.0310961856}},
		{"amdahl (kappa 0)", USLParams{Lambda: 500, Sigma: 0.1}},
		{"crosstalk only (sigma 0)", USLParams{Lambda: 800, Kappa: 0.001}},
		{"linear", USLParams{Lambda: 1200}},
		{"serial", USLParams{Lambda: 300, Sigma: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fit, err := FitUSL(uslPoints(tc.p, ns, nil))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(fit.Lambda-tc.p.Lambda) > 1e-7*tc.p.Lambda ||
				math.Abs(fit.Sigma-tc.p.Sigma) > 1e-8 || math.Abs(fit.Kappa-tc.p.Kappa) > 1e-9 {
				t.Errorf("fit %+v, want %+v", fit.USLParams, tc.p)
			}
			if fit.R2 < 1-1e-12 {
				t.Errorf("R² %v for exact data", fit.R2)
			}
			if fit.Points != len(ns) {
				t.Errorf("points %d", fit.Points)
			}
			if tc.p.Kappa > 0 && tc.p.Sigma < 1 {
				want := math.Sqrt((1 - tc.p.Sigma) / tc.p.Kappa)
				if math.Abs(fit.PeakN-want) > 1e-5*want {
					t.Errorf("peak N %v, want %v", fit.PeakN, want)
				}
				if math.Abs(fit.PeakX-tc.p.Predict(want)) > 1e-6*fit.PeakX {
					t.Errorf("peak X %v, want %v", fit.PeakX, tc.p.Predict(want))
				}
			} else if fit.PeakN != 0 || fit.PeakX != 0 {
				t.Errorf("peak (%v, %v) without crosstalk", fit.PeakN, fit.PeakX)
			}
		})
	}
}

func TestFitUSLStudyPeak(t *testing.T) {
	// The study's first stage peaks between 4 and 5 servers ("reaching its
	// peak at 4 servers").
	fit, err := FitUSL(uslPoints(USLParams{Lambda: 2845.2309970244, Sigma: 0.2692010226, Kappa: 0.0310961856},
		[]float64{1, 2, 3, 4, 5, 6}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if fit.PeakN < 4 || fit.PeakN > 5 {
		t.Errorf("peak at N=%v", fit.PeakN)
	}
}

// deterministicNoise is a fixed pattern of relative errors within ±2%.
func deterministicNoise(i int) float64 {
	pattern := []float64{0.012, -0.018, 0.004, 0.02, -0.007, -0.015, 0.009, 0.016, -0.011, 0.002, -0.02, 0.013}
	return pattern[i%len(pattern)]
}

func TestFitUSLWithNoise(t *testing.T) {
	truth := USLParams{Lambda: 1000, Sigma: 0.03, Kappa: 0.001}
	var ns []float64
	for n := 1; n <= 16; n++ {
		ns = append(ns, float64(n), float64(n)) // two replications per N
	}
	pts := uslPoints(truth, ns, deterministicNoise)
	fit, err := FitUSL(pts)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.Lambda-truth.Lambda) > 0.02*truth.Lambda ||
		math.Abs(fit.Sigma-truth.Sigma) > 0.01 || math.Abs(fit.Kappa-truth.Kappa) > 0.0003 {
		t.Errorf("fit %+v, want near %+v", fit.USLParams, truth)
	}
	if fit.R2 < 0.95 || fit.R2 > 1 {
		t.Errorf("R² %v", fit.R2)
	}
	// Least squares: no worse than the truth, and no better anywhere near.
	p := [3]float64{fit.Lambda, fit.Sigma, fit.Kappa}
	if truthSSE := uslSSE(pts, [3]float64{truth.Lambda, truth.Sigma, truth.Kappa}); fit.SSE > truthSSE {
		t.Errorf("fit SSE %v above the true coefficients' %v", fit.SSE, truthSSE)
	}
	assertLocalMinimum(t, pts, p, fit.SSE)
}

// assertLocalMinimum checks that no feasible small move of one or two
// coefficients lowers the SSE by more than rounding.
func assertLocalMinimum(t *testing.T, pts []USLPoint, p [3]float64, sse float64) {
	t.Helper()
	steps := [3]float64{1e-4 * p[0], 1e-5, 1e-6}
	for a := range 3 {
		for b := range 3 {
			for _, sa := range []float64{-1, 1} {
				for _, sb := range []float64{-1, 1} {
					q := p
					q[a] += sa * steps[a]
					if b != a {
						q[b] += sb * steps[b]
					}
					if q[1] < 0 || q[2] < 0 {
						continue
					}
					if s := uslSSE(pts, q); s < sse*(1-1e-9) {
						t.Errorf("moving %v to %v lowers SSE %v to %v", p, q, sse, s)
					}
				}
			}
		}
	}
}

func TestFitUSLClampsNegativeCoefficients(t *testing.T) {
	// Superlinear data: the unconstrained κ is negative (as in the study's
	// second stage); the model does not allow it.
	truth := USLParams{Lambda: 1000, Sigma: 0.1, Kappa: -0.005}
	pts := uslPoints(truth, []float64{1, 2, 3, 4, 5, 6}, nil)
	fit, err := FitUSL(pts)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Kappa != 0 || fit.Sigma < 0 || fit.Lambda <= 0 {
		t.Errorf("fit %+v: want κ clamped to 0", fit.USLParams)
	}
	if fit.PeakN != 0 {
		t.Errorf("peak %v without crosstalk", fit.PeakN)
	}
	u := fit.Unconstrained
	if u == nil {
		t.Fatal("no unconstrained fit")
	}
	if math.Abs(u.Kappa-truth.Kappa) > 1e-9 || math.Abs(u.Sigma-truth.Sigma) > 1e-8 {
		t.Errorf("unconstrained %+v, want %+v", u.USLParams, truth)
	}
	if fit.SSE < u.SSE {
		t.Errorf("constrained SSE %v below unconstrained %v", fit.SSE, u.SSE)
	}
	assertLocalMinimum(t, pts, [3]float64{fit.Lambda, fit.Sigma, fit.Kappa}, fit.SSE)
}

func TestFitUSLRejectsDegenerateInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []USLPoint
		want error
	}{
		{"none", nil, ErrUSLTooFewPoints},
		{"one", []USLPoint{{1, 100}}, ErrUSLTooFewPoints},
		{"two", []USLPoint{{1, 100}, {2, 150}}, ErrUSLTooFewPoints},
		{"two distinct N", []USLPoint{{1, 100}, {2, 150}, {2, 160}, {1, 90}}, ErrUSLTooFewPoints},
		{"all zero", []USLPoint{{1, 0}, {2, 0}, {3, 0}}, ErrUSLNoThroughput},
		{"zero N", []USLPoint{{0, 100}, {2, 150}, {3, 160}}, ErrUSLBadPoint},
		{"negative N", []USLPoint{{-1, 100}, {2, 150}, {3, 160}}, ErrUSLBadPoint},
		{"negative X", []USLPoint{{1, -100}, {2, 150}, {3, 160}}, ErrUSLBadPoint},
		{"NaN X", []USLPoint{{1, math.NaN()}, {2, 150}, {3, 160}}, ErrUSLBadPoint},
		{"Inf N", []USLPoint{{math.Inf(1), 100}, {2, 150}, {3, 160}}, ErrUSLBadPoint},
		{"Inf X", []USLPoint{{1, math.Inf(1)}, {2, 150}, {3, 160}}, ErrUSLBadPoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FitUSL(tc.pts); !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}

func TestFitUSLAnyValidInputGivesFeasibleFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := 3 + rng.IntN(8)
		pts := make([]USLPoint, n)
		for i := range pts {
			pts[i] = USLPoint{N: float64(i + 1), X: math.Floor(rng.Float64() * 1e4)}
			if rng.IntN(4) == 0 {
				pts[i].X = 0
			}
		}
		fit, err := FitUSL(pts)
		if errors.Is(err, ErrUSLNoThroughput) {
			continue
		}
		if err != nil {
			t.Fatalf("trial %d %v: %v", trial, pts, err)
		}
		for _, v := range []float64{fit.Lambda, fit.Sigma, fit.Kappa, fit.SSE, fit.R2, fit.PeakN, fit.PeakX} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("trial %d %v: non-finite fit %+v", trial, pts, fit)
			}
		}
		if fit.Lambda < 0 || fit.Sigma < 0 || fit.Kappa < 0 || fit.R2 > 1 {
			t.Fatalf("trial %d %v: infeasible fit %+v", trial, pts, fit)
		}
		// Never worse than the always-feasible linear fit.
		lin := [3]float64{bestLambda(pts, 0, 0), 0, 0}
		if fit.SSE > uslSSE(pts, lin)*(1+1e-9) {
			t.Fatalf("trial %d %v: SSE %v worse than linear %v", trial, pts, fit.SSE, uslSSE(pts, lin))
		}
	}
}

func TestUSLPredictOutsideDomain(t *testing.T) {
	p := USLParams{Lambda: 100, Sigma: -1}
	if x := p.Predict(5); x != 0 {
		t.Errorf("Predict with a non-positive denominator = %v, want 0", x)
	}
	if x := (USLParams{Lambda: 100}).Predict(3); x != 300 {
		t.Errorf("linear Predict(3) = %v", x)
	}
}
