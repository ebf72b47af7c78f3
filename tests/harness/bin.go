package harness

// CorralBin is the corral binary the harness starts (built once per test
// binary, or CORRAL_BIN), for tests that run it themselves; "" for a
// ZooKeeper target.
func (e *Env) CorralBin() string { return e.corralBin }
