package stats

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// A 2^k r factorial design (Jain, The Art of Computer Systems Performance
// Analysis, ch. 17 and 18) measures every combination of k two-level
// factors r times. Experiment i (0 ≤ i < 2^k, "standard order") has factor
// j at its high level (+1) when bit j of i is set, at its low level (−1)
// otherwise. Each effect is named by a set of factors, a bit mask m: A is
// m = 1, B is 2, AB is 3, C is 4, ..., the mean I is 0. Its column of the
// sign table is the product of its factors' levels, and the model is
//
//	y_ir = q0 + Σ_m q_m·sign(i, m) + e_ir
//
// with q_m = Σ_i sign(i, m)·ȳ_i / 2^k. The total variation
// SST = Σ_ir (y_ir − ȳ)² splits exactly into SS_m = 2^k·r·q_m² per effect
// and the error SSE = Σ_ir (y_ir − ȳ_i)², so each effect's share of SST
// says how much of the variation it explains.

// FactorialEffect is one effect of a 2^k r design.
type FactorialEffect struct {
	// Mask is the set of factors (bit j: factor j); Letters names them
	// "A", "B", "AB", ...; Name joins the factors' names with "×".
	Mask    int    `json:"mask"`
	Letters string `json:"letters"`
	Name    string `json:"name"`
	// Q is the effect q_m, SS its sum of squares 2^k·r·q_m², Share SS/SST.
	Q     float64 `json:"q"`
	SS    float64 `json:"ss"`
	Share float64 `json:"share"`
	// Low and High bound the confidence interval of Q (replicated designs
	// only; both equal Q when r = 1). Significant says the interval
	// excludes zero.
	Low         float64 `json:"ci_low"`
	High        float64 `json:"ci_high"`
	Significant bool    `json:"significant"`
}

// FactorialAnalysis is the analysis of a 2^k r design: effects, the
// allocation of variation and, when r > 1, confidence intervals.
type FactorialAnalysis struct {
	Factors []string `json:"factors"`
	K       int      `json:"k"`
	R       int      `json:"r"`
	// Means are ȳ_i, the mean response of each experiment in standard
	// order.
	Means []float64 `json:"means"`
	// Q0 is the grand mean, with its confidence interval.
	Q0     float64 `json:"q0"`
	Q0Low  float64 `json:"q0_ci_low"`
	Q0High float64 `json:"q0_ci_high"`
	// Effects are every effect but the mean, in mask order (A, B, AB, C,
	// AC, BC, ABC, ...).
	Effects []FactorialEffect `json:"effects"`
	SST     float64           `json:"sst"`
	SSE     float64           `json:"sse"`
	// ErrorShare is SSE/SST: the variation no factor explains (0 when
	// r = 1: an unreplicated design cannot see its errors).
	ErrorShare float64 `json:"error_share"`
	// Confidence is the level of the intervals (FactorialConfidence);
	// ErrorDOF = 2^k(r−1) the error's degrees of freedom, SE the standard
	// deviation of the errors sqrt(SSE/ErrorDOF), SQ that of each effect
	// SE/sqrt(2^k·r) and T the Student t quantile the intervals use:
	// q ± T·SQ.
	Confidence float64 `json:"confidence"`
	ErrorDOF   int     `json:"error_dof"`
	SE         float64 `json:"se"`
	SQ         float64 `json:"sq"`
	T          float64 `json:"t"`
}

// FactorialConfidence is the two-sided confidence level of the effects'
// intervals: 90%, as in Jain's examples.
const FactorialConfidence = 0.90

// MaxFactors bounds k: 2^10 experiments is far more than any benchmark
// here runs.
const MaxFactors = 10

// ErrFactorialShape is returned for responses that do not form a 2^k r
// design.
var ErrFactorialShape = errors.New("bench: factorial design")

// FactorialSign is the sign table's entry for experiment i and the effect
// of mask m: the product of the levels (±1) of m's factors in i.
func FactorialSign(i, m int) int {
	// A factor of m at its high level contributes +1, one at its low
	// level −1: the sign is that of the count of the latter.
	if bits.OnesCount(uint(m&^i))%2 == 1 {
		return -1
	}
	return 1
}

// FactorHigh reports whether experiment i runs factor j at its high level.
func FactorHigh(i, j int) bool { return i>>j&1 == 1 }

// EffectLetters names the effect of mask m: "A" for factor 0, "AB" for
// factors 0 and 1, "I" for the mean.
func EffectLetters(m int) string {
	if m == 0 {
		return "I"
	}
	var b strings.Builder
	for j := 0; m>>j != 0; j++ {
		if m>>j&1 == 1 {
			b.WriteByte(byte('A' + j))
		}
	}
	return b.String()
}

// AnalyzeFactorial computes the effects of the factors named by factors
// (k = len(factors); an empty name is replaced by its letter) from y,
// where y[i] holds the r replications of experiment i in standard order.
func AnalyzeFactorial(factors []string, y [][]float64) (*FactorialAnalysis, error) {
	k := len(factors)
	if k < 1 || k > MaxFactors {
		return nil, fmt.Errorf("%w: %d factors (want 1 to %d)", ErrFactorialShape, k, MaxFactors)
	}
	n := 1 << k
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d experiments for %d factors (want %d)", ErrFactorialShape, len(y), k, n)
	}
	r := len(y[0])
	if r < 1 {
		return nil, fmt.Errorf("%w: no replications", ErrFactorialShape)
	}
	for i, row := range y {
		if len(row) != r {
			return nil, fmt.Errorf("%w: experiment %d has %d replications, experiment 0 has %d", ErrFactorialShape, i, len(row), r)
		}
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: experiment %d has response %v", ErrFactorialShape, i, v)
			}
		}
	}
	a := &FactorialAnalysis{K: k, R: r, Means: make([]float64, n), Confidence: FactorialConfidence}
	for j, name := range factors {
		if name == "" {
			name = EffectLetters(1 << j)
		}
		a.Factors = append(a.Factors, name)
	}
	for i, row := range y {
		var s float64
		for _, v := range row {
			s += v
		}
		a.Means[i] = s / float64(r)
		for _, v := range row {
			a.SSE += (v - a.Means[i]) * (v - a.Means[i])
		}
	}
	q := make([]float64, n)
	for m := range n {
		var s float64
		for i := range n {
			s += float64(FactorialSign(i, m)) * a.Means[i]
		}
		q[m] = s / float64(n)
	}
	a.Q0 = q[0]
	for _, row := range y {
		for _, v := range row {
			a.SST += (v - a.Q0) * (v - a.Q0)
		}
	}
	a.ErrorDOF = n * (r - 1)
	if a.ErrorDOF > 0 {
		a.SE = math.Sqrt(a.SSE / float64(a.ErrorDOF))
		a.SQ = a.SE / math.Sqrt(float64(n*r))
		a.T = studentTQuantile(1-(1-a.Confidence)/2, float64(a.ErrorDOF))
	}
	half := a.T * a.SQ
	a.Q0Low, a.Q0High = a.Q0-half, a.Q0+half
	for m := 1; m < n; m++ {
		e := FactorialEffect{Mask: m, Letters: EffectLetters(m), Q: q[m], SS: float64(n*r) * q[m] * q[m]}
		var names []string
		for j := range k {
			if m>>j&1 == 1 {
				names = append(names, a.Factors[j])
			}
		}
		e.Name = strings.Join(names, "×")
		if a.SST > 0 {
			e.Share = e.SS / a.SST
		}
		e.Low, e.High = e.Q-half, e.Q+half
		e.Significant = r > 1 && (e.Low > 0 || e.High < 0)
		a.Effects = append(a.Effects, e)
	}
	if a.SST > 0 {
		a.ErrorShare = a.SSE / a.SST
	}
	return a, nil
}
