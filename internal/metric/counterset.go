package metric

import "sync"

// CounterSet is a family of counters told apart by the value of one label
// (ZooKeeper's CounterSet, whose Prometheus provider labels its members
// "key"): one metric name, e.g. corral_snapshots_total{kind="busy"},
// rather than a name per kind, as Prometheus's naming conventions ask.
// mntr prints each member as ZooKeeper's SimpleCounterSet does,
// "<value>_<name>".
type CounterSet struct {
	name, help, label string

	mu      sync.Mutex
	values  []string // in creation order
	members map[string]*Counter
}

// Name is the family's name.
func (s *CounterSet) Name() string { return s.name }

// Help describes the family for Prometheus.
func (s *CounterSet) Help() string { return s.help }

// Label is the name of the label that tells the members apart.
func (s *CounterSet) Label() string { return s.label }

// With returns the member whose label has value, creating it at zero.
func (s *CounterSet) With(value string) *Counter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.members[value]; ok {
		return c
	}
	c := &Counter{name: value + "_" + s.name, help: s.help}
	s.members[value] = c
	s.values = append(s.values, value)
	return c
}

// Each calls f with each member's label value and counter, in creation
// order.
func (s *CounterSet) Each(f func(value string, c *Counter)) {
	s.mu.Lock()
	values := append([]string(nil), s.values...)
	members := make([]*Counter, len(values))
	for i, v := range values {
		members[i] = s.members[v]
	}
	s.mu.Unlock()
	for i, v := range values {
		f(v, members[i])
	}
}
