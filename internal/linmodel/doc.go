// Package linmodel is the sequential specification of a few independent
// versioned registers -- ZooKeeper's setData and getData on znodes -- as a
// porcupine model. The simulator (sim) checks its histories against it,
// and so does the ensemble suite's CAS test (tests/ensemble) against real
// servers: one model, so both check the same behaviour.
package linmodel
