package datatree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestChildTableAgainstAModel: random adds and removes under one parent,
// at sizes where buckets split and merge, leave a table whose get and
// each agree with a map of the names present.
func TestChildTableAgainstAModel(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 0))
		var na nodeAlloc
		c := newChildTable(&na)
		parent := na.alloc()
		parent.ext = &nodeExt{kids: c}
		model := map[string]*Node{}
		limit := 1 + r.IntN(300)
		for step := 0; step < 2000; step++ {
			name := fmt.Sprintf("n%d", r.IntN(2*limit))
			if k, ok := model[name]; ok && r.IntN(2) == 0 {
				c.remove(k)
				delete(model, name)
			} else if !ok {
				k := na.alloc()
				k.parent = na.ref(parent)
				k.setTestName(name)
				c.add(k)
				model[name] = k
			}
			for n, k := range model {
				if c.get(n) != k {
					t.Fatalf("seed %d step %d: get(%s) lost", seed, step, n)
				}
			}
			var got []string
			c.each(func(n *Node) { got = append(got, n.baseName()) })
			slices.Sort(got)
			want := make([]string, 0, len(model))
			for n := range model {
				want = append(want, n)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) || int(c.n) != len(model) {
				t.Fatalf("seed %d step %d: each lists %v, want %v (n %d)", seed, step, got, want, c.n)
			}
			if err := childTableError("/p", parent); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
		}
	}
}
