// Package e2e holds the end-to-end tests: a real server process (corral or
// Apache ZooKeeper 3.9.3, chosen by CORRAL_E2E_TARGET) driven by the
// third-party go-zookeeper client and by the harness's raw-socket client.
// Every test passes against ZooKeeper 3.9.3, so each one encodes the
// reference server's real behaviour.
//
//	CORRAL_E2E_TARGET=zookeeper go test ./tests/...
//	go test ./tests/...            # corral (built from ./cmd/corral)
//	go test -short ./tests/...     # skips the slowest cases
package e2e
