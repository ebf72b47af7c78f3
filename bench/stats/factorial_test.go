package stats

import (
	"errors"
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Jain, The Art of Computer Systems Performance Analysis, §17.2: memory
// size (A: 4 or 16 MB) × cache size (B: 1 or 2 KB), MIPS.
func TestFactorialTextbook22(t *testing.T) {
	a, err := AnalyzeFactorial([]string{"memory", "cache"}, [][]float64{{15}, {45}, {25}, {75}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Q0 != 40 {
		t.Errorf("q0 = %v, want 40", a.Q0)
	}
	want := []struct {
		letters, name string
		q, share      float64
	}{
		{"A", "memory", 20, 1600.0 / 2100},
		{"B", "cache", 10, 400.0 / 2100},
		{"AB", "memory×cache", 5, 100.0 / 2100},
	}
	if len(a.Effects) != len(want) {
		t.Fatalf("%d effects, want %d", len(a.Effects), len(want))
	}
	for i, w := range want {
		e := a.Effects[i]
		if e.Letters != w.letters || e.Name != w.name || e.Q != w.q || !near(e.Share, w.share, 1e-12) {
			t.Errorf("effect %d = %+v, want %+v", i, e, w)
		}
		if e.Significant || e.Low != e.Q || e.High != e.Q {
			t.Errorf("unreplicated effect %s has an interval: %+v", e.Letters, e)
		}
	}
	// 76%, 19% and 5%, as the book rounds them.
	for i, pct := range []float64{76, 19, 5} {
		if got := math.Round(a.Effects[i].Share * 100); got != pct {
			t.Errorf("%s share %.0f%%, want %.0f%%", a.Effects[i].Letters, got, pct)
		}
	}
	if a.SST != 2100 || a.SSE != 0 || a.ErrorShare != 0 || a.ErrorDOF != 0 {
		t.Errorf("SST %v SSE %v error share %v dof %d", a.SST, a.SSE, a.ErrorShare, a.ErrorDOF)
	}
}

// Jain §18.1–18.4, Example 18.1: the same study with three replications.
func TestFactorialTextbook22Replicated(t *testing.T) {
	y := [][]float64{{15, 18, 12}, {45, 48, 51}, {25, 28, 19}, {75, 75, 81}}
	a, err := AnalyzeFactorial([]string{"memory", "cache"}, y)
	if err != nil {
		t.Fatal(err)
	}
	if a.K != 2 || a.R != 3 {
		t.Errorf("k %d r %d", a.K, a.R)
	}
	for i, m := range []float64{15, 48, 24, 77} {
		if !near(a.Means[i], m, 1e-12) {
			t.Errorf("mean %d = %v, want %v", i, a.Means[i], m)
		}
	}
	if !near(a.Q0, 41, 1e-12) {
		t.Errorf("q0 = %v, want 41", a.Q0)
	}
	wantQ := []float64{21.5, 9.5, 5}
	wantSS := []float64{5547, 1083, 300}
	for i := range wantQ {
		if e := a.Effects[i]; !near(e.Q, wantQ[i], 1e-12) || !near(e.SS, wantSS[i], 1e-9) {
			t.Errorf("%s: q %v SS %v, want %v %v", e.Letters, e.Q, e.SS, wantQ[i], wantSS[i])
		}
	}
	if !near(a.SSE, 102, 1e-9) || !near(a.SST, 7032, 1e-9) {
		t.Errorf("SSE %v SST %v, want 102 7032", a.SSE, a.SST)
	}
	// Allocation of variation: 78.88%, 15.40%, 4.27%, error 1.45%.
	for i, pct := range []float64{78.88, 15.40, 4.27} {
		if got := math.Round(a.Effects[i].Share*1e4) / 100; got != pct {
			t.Errorf("%s share %v%%, want %v%%", a.Effects[i].Letters, got, pct)
		}
	}
	if got := math.Round(a.ErrorShare*1e4) / 100; got != 1.45 {
		t.Errorf("error share %v%%, want 1.45%%", got)
	}
	var total float64
	for _, e := range a.Effects {
		total += e.Share
	}
	if !near(total+a.ErrorShare, 1, 1e-12) {
		t.Errorf("shares sum to %v", total+a.ErrorShare)
	}
	// §18.4: s_e = sqrt(102/8) = 3.57, s_q = 3.57/sqrt(12) = 1.03,
	// t[0.95; 8] = 1.86, so the 90% intervals are q ∓ 1.92: q0 (39.08,
	// 42.92), qA (19.58, 23.42), qB (7.58, 11.42), qAB (3.08, 6.92), to
	// two decimals without rounding the steps.
	if a.ErrorDOF != 8 || !near(a.SE, 3.5707, 1e-4) || !near(a.SQ, 1.0308, 1e-4) || !near(a.T, 1.8595, 1e-4) {
		t.Errorf("dof %d se %v sq %v t %v", a.ErrorDOF, a.SE, a.SQ, a.T)
	}
	round2 := func(v float64) float64 { return math.Round(v*100) / 100 }
	if round2(a.Q0Low) != 39.08 || round2(a.Q0High) != 42.92 {
		t.Errorf("q0 interval (%v, %v)", a.Q0Low, a.Q0High)
	}
	wantCI := [][2]float64{{19.58, 23.42}, {7.58, 11.42}, {3.08, 6.92}}
	for i, w := range wantCI {
		e := a.Effects[i]
		if round2(e.Low) != w[0] || round2(e.High) != w[1] || !e.Significant {
			t.Errorf("%s interval (%v, %v) significant %v, want %v", e.Letters, e.Low, e.High, e.Significant, w)
		}
	}
}

func TestFactorialInsignificantEffect(t *testing.T) {
	// B moves the response by less than the noise between replications.
	y := [][]float64{{10, 14}, {30, 34}, {11, 13}, {31, 33}}
	a, err := AnalyzeFactorial([]string{"A", "B"}, y)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Effects[0].Significant {
		t.Errorf("A not significant: %+v", a.Effects[0])
	}
	if a.Effects[1].Significant || a.Effects[1].Q != 0 {
		t.Errorf("B significant: %+v", a.Effects[1])
	}
}

func TestFactorialSignTable(t *testing.T) {
	for k := 1; k <= 4; k++ {
		n := 1 << k
		// Every column but I sums to zero, and any two differ: the
		// columns are orthogonal, which is what makes the effects
		// separable.
		for m1 := range n {
			for m2 := range n {
				var dot int
				for i := range n {
					dot += FactorialSign(i, m1) * FactorialSign(i, m2)
				}
				if want := 0; m1 == m2 {
					if dot != n {
						t.Errorf("k=%d column %s·itself = %d", k, EffectLetters(m1), dot)
					}
				} else if dot != want {
					t.Errorf("k=%d columns %s·%s = %d", k, EffectLetters(m1), EffectLetters(m2), dot)
				}
			}
		}
	}
	// Standard order for 2^2: A is −+−+, B −−++, AB +−−+.
	cols := map[int][]int{1: {-1, 1, -1, 1}, 2: {-1, -1, 1, 1}, 3: {1, -1, -1, 1}}
	for m, want := range cols {
		for i, s := range want {
			if got := FactorialSign(i, m); got != s {
				t.Errorf("sign(%d, %s) = %d, want %d", i, EffectLetters(m), got, s)
			}
		}
	}
	if EffectLetters(0) != "I" || EffectLetters(5) != "AC" || EffectLetters(7) != "ABC" {
		t.Error("effect letters")
	}
	if !FactorHigh(5, 0) || FactorHigh(5, 1) || !FactorHigh(5, 2) {
		t.Error("FactorHigh(5, ·)")
	}
}

func TestFactorial23RecoversAdditiveModel(t *testing.T) {
	// y = 100 + 20·xA − 8·xB + 3·xC + 2·xA·xC, two replications ±1.
	var y [][]float64
	for i := range 8 {
		x := func(j int) float64 {
			if FactorHigh(i, j) {
				return 1
			}
			return -1
		}
		v := 100 + 20*x(0) - 8*x(1) + 3*x(2) + 2*x(0)*x(2)
		y = append(y, []float64{v - 1, v + 1})
	}
	a, err := AnalyzeFactorial([]string{"servers", "value", "durability"}, y)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"A": 20, "B": -8, "AB": 0, "C": 3, "AC": 2, "BC": 0, "ABC": 0}
	for _, e := range a.Effects {
		if !near(e.Q, want[e.Letters], 1e-12) {
			t.Errorf("%s (%s) = %v, want %v", e.Letters, e.Name, e.Q, want[e.Letters])
		}
	}
	if a.Effects[4].Name != "servers×durability" {
		t.Errorf("AC named %q", a.Effects[4].Name)
	}
	// SSE = 16 residuals of ±1.
	if !near(a.SSE, 16, 1e-9) || a.ErrorDOF != 8 {
		t.Errorf("SSE %v dof %d", a.SSE, a.ErrorDOF)
	}
}

func TestFactorialEmptyNameIsLetter(t *testing.T) {
	a, err := AnalyzeFactorial([]string{"", "b"}, [][]float64{{1}, {2}, {3}, {4}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Factors[0] != "A" || a.Effects[2].Name != "A×b" {
		t.Errorf("names %v, %q", a.Factors, a.Effects[2].Name)
	}
}

func TestFactorialConstantResponse(t *testing.T) {
	a, err := AnalyzeFactorial([]string{"A"}, [][]float64{{5, 5}, {5, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if a.SST != 0 || a.Effects[0].Share != 0 || a.ErrorShare != 0 || a.Effects[0].Significant {
		t.Errorf("constant response: %+v", a)
	}
}

func TestFactorialRejectsBadShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		factors []string
		y       [][]float64
	}{
		{"no factors", nil, [][]float64{{1}}},
		{"too many factors", make([]string, MaxFactors+1), nil},
		{"too few experiments", []string{"A", "B"}, [][]float64{{1}, {2}, {3}}},
		{"too many experiments", []string{"A"}, [][]float64{{1}, {2}, {3}}},
		{"no replications", []string{"A"}, [][]float64{{}, {}}},
		{"ragged", []string{"A"}, [][]float64{{1, 2}, {3}}},
		{"NaN", []string{"A"}, [][]float64{{1}, {math.NaN()}}},
		{"Inf", []string{"A"}, [][]float64{{math.Inf(-1)}, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := AnalyzeFactorial(tc.factors, tc.y); !errors.Is(err, ErrFactorialShape) {
				t.Errorf("error %v, want ErrFactorialShape", err)
			}
		})
	}
}

func TestStudentTQuantile(t *testing.T) {
	// Two-sided 90% and 95% critical values from any t table.
	for _, tc := range []struct{ p, nu, want float64 }{
		{0.95, 1, 6.3138}, {0.95, 4, 2.1318}, {0.95, 8, 1.8595}, {0.95, 30, 1.6973},
		{0.975, 2, 4.3027}, {0.975, 10, 2.2281}, {0.995, 5, 4.0321}, {0.9995, 1, 636.6192},
	} {
		if got := studentTQuantile(tc.p, tc.nu); !near(got, tc.want, 1e-4*tc.want) {
			t.Errorf("t[%v; %v] = %v, want %v", tc.p, tc.nu, got, tc.want)
		}
	}
	if studentTQuantile(0.5, 3) != 0 || studentTQuantile(0.9, 0) != 0 || studentTQuantile(1, 3) != 0 {
		t.Error("degenerate quantiles not 0")
	}
	if got := studentTCDF(-1.8595, 8); !near(got, 0.05, 1e-5) {
		t.Errorf("CDF(−1.8595; 8) = %v", got)
	}
}
