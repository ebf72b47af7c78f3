// Package lint holds the house rules as a test, in the manner of
// pebble's internal/lint: `go test ./internal/lint` checks the import
// layering (what may import what), gofmt, go vet, that no tracked file
// names a directory of a build machine, that no test waits with a loop
// of its own around time.Sleep and a deadline (testutil.Eventually does
// that), and, with -staticcheck, staticcheck.
package lint
