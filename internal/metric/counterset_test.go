package metric

import (
	"reflect"
	"testing"
)

func TestCounterSet(t *testing.T) {
	r := NewRegistry(nil)
	s := r.CounterSet("corral_snapshots_total", "help", "kind", "busy", "idle")
	s.With("idle").Add(3)
	s.With("checkpoint").Inc()
	if again := r.CounterSet("corral_snapshots_total", "", "kind"); again != s {
		t.Fatal("registering the name again returned another set")
	}
	var got []string
	var vals []int64
	s.Each(func(v string, c *Counter) {
		got = append(got, v+"="+c.Name())
		vals = append(vals, c.Load())
	})
	want := []string{"busy=busy_corral_snapshots_total", "idle=idle_corral_snapshots_total",
		"checkpoint=checkpoint_corral_snapshots_total"}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(vals, []int64{0, 3, 1}) {
		t.Errorf("members %v %v, want %v [0 3 1]", got, vals, want)
	}
	if sets := r.CounterSets(); len(sets) != 1 || sets[0].Label() != "kind" {
		t.Errorf("CounterSets %v", sets)
	}
	defer func() {
		if recover() == nil {
			t.Error("a counter set under a summary's name did not panic")
		}
	}()
	r.Summary("x", "", DetailBasic)
	r.CounterSet("x", "", "kind")
}
