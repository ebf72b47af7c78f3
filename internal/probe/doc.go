// Package probe records timestamped stage marks on a write's path through
// one or more servers, to find where a sequential write's latency goes.
// It is compiled in only with the build tag probe (go build -tags probe);
// otherwise Mark is an empty function the compiler removes. Each process
// keeps its marks in a fixed array and writes them, one per line
// ("unix-nanos stage zxid"), to $CORRAL_PROBE_DIR/probe-PID.txt when Dump
// is called at shutdown; timestamps are the wall clock, which all
// processes on one machine share.
package probe
