// Package stats is the benchmark's arithmetic: latency histograms (Hist),
// the Universal Scalability Law fit (usl.go), and the analysis of 2^k r
// factorial experiments with Student's t confidence intervals. It imports
// nothing of the benchmark and no plotting.
package stats
