package harness

import "os"

// CorralBin is the corral binary the harness runs ("" for the ZooKeeper
// target), for tests that run it with their own arguments (a zoo.cfg
// that must refuse to start, say).
func (e *Env) CorralBin() string { return e.corralBin }

// AddZooKeeperClasspath appends cp to the classpath ZooKeeper runs with,
// for a test that needs one of its optional parts (Jetty for the
// AdminServer). Call it before starting servers.
func (e *Env) AddZooKeeperClasspath(cp string) {
	if e.zkClasspath == "" {
		e.zkClasspath = cp
		return
	}
	e.zkClasspath += string(os.PathListSeparator) + cp
}
