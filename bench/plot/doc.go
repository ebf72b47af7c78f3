// Package plot draws the benchmark's figures as PNG files: latency
// percentile plots of compare and run, the durability experiment's time
// series and tree-size figures, the read-ratio curves, the failure
// timeline and the USL fit of scale. It is the only package of the module
// that imports gonum's plotting; the experiments in package bench produce
// the reports, and the command writes their figures through this package.
package plot
