package sim

import "testing"

// TestReconfigFaults runs seeds with frequent reconfigurations (and the
// usual faults) and checks that changes were committed: the invariants
// hold across membership changes, and the fault is exercised rather than
// always refused.
func TestReconfigFaults(t *testing.T) {
	reconfigs := 0
	for seed := uint64(1); seed <= 12; seed++ {
		o := RandomOptions(seed)
		o.ReconfigRate = 0.01
		o.Spares = 2
		st, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		reconfigs += st.Reconfigs
	}
	if reconfigs == 0 {
		t.Fatalf("no configuration change committed in 12 runs")
	}
	t.Logf("%d configuration changes committed", reconfigs)
}
