package stats

import "math"

// Student's t distribution, for the confidence intervals of factorial
// effects. The module has no statistics dependency (gonum's stat is in the
// module graph only through gonum/plot, and adding it would change
// go.mod), and the intervals need only the quantile.

// studentTCDF is P(T ≤ t) for T with nu degrees of freedom.
func studentTCDF(t, nu float64) float64 {
	x := nu / (nu + t*t)
	tail := 0.5 * regIncBeta(nu/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// studentTQuantile is the t with P(T ≤ t) = p, for 0.5 ≤ p < 1, found by
// bisection (the CDF is monotone); 0 for p ≤ 0.5 or nu ≤ 0, NaN-free.
func studentTQuantile(p, nu float64) float64 {
	if !(p > 0.5) || !(nu > 0) || p >= 1 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for studentTCDF(hi, nu) < p && hi < 1e12 {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if studentTCDF(mid, nu) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by
// its continued fraction (Numerical Recipes, §6.4), using the symmetry
// I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaContinuedFraction(a, b, x) / a
	}
	return 1 - front*betaContinuedFraction(b, a, 1-x)/b
}

// betaContinuedFraction evaluates the continued fraction of I_x(a, b) by
// the modified Lentz method.
func betaContinuedFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c := 1.0
	d := 1 - qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h
}
