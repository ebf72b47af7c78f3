package metric

import (
	"sync"
	"sync/atomic"
	"time"
)

// Counter is a monotonically increasing count (ZooKeeper's Counter).
type Counter struct {
	name, help string
	v          atomic.Int64
}

// Add adds n (n >= 0).
func (c *Counter) Add(n int64) { c.v.Add(n) }

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// Load returns the count.
func (c *Counter) Load() int64 { return c.v.Load() }

// Name is the counter's ZooKeeper name, e.g. "commit_count".
func (c *Counter) Name() string { return c.name }

// Help describes the counter for Prometheus.
func (c *Counter) Help() string { return c.help }

// Registry owns a server's counters and summaries, in registration order
// (mntr prints them in that order). Registering is for start-up; the
// returned metrics are then fed without the registry.
type Registry struct {
	now func() time.Time

	mu        sync.Mutex
	counters  []*Counter
	sets      []*CounterSet
	summaries []*Summary
	byName    map[string]any
}

// NewRegistry returns an empty registry; now is the clock that rotates
// summary windows (nil: time.Now).
func NewRegistry(now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{now: now, byName: map[string]any{}}
}

// Counter returns the counter called name, creating it. It panics if name
// is already a summary: metric names are fixed in code.
func (r *Registry) Counter(name, help string) *Counter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.byName[name]; ok {
		return m.(*Counter)
	}
	c := &Counter{name: name, help: help}
	r.counters = append(r.counters, c)
	r.byName[name] = c
	return c
}

// CounterSet returns the counter set called name whose members the label
// tells apart, creating it with a member at zero for each of values (so
// that a scrape shows every kind before the first event). It panics if
// name is already another kind of metric: metric names are fixed in code.
func (r *Registry) CounterSet(name, help, label string, values ...string) *CounterSet {
	r.mu.Lock()
	s, ok := r.byName[name].(*CounterSet)
	if !ok {
		if _, taken := r.byName[name]; taken {
			r.mu.Unlock()
			panic("metric: " + name + " is registered as another kind")
		}
		s = &CounterSet{name: name, help: help, label: label, members: map[string]*Counter{}}
		r.sets = append(r.sets, s)
		r.byName[name] = s
	}
	r.mu.Unlock()
	for _, v := range values {
		s.With(v)
	}
	return s
}

// CounterSets returns the counter sets in registration order.
func (r *Registry) CounterSets() []*CounterSet {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*CounterSet(nil), r.sets...)
}

// Summary returns the summary called name, creating it with detail d.
func (r *Registry) Summary(name, help string, d Detail) *Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.byName[name]; ok {
		return m.(*Summary)
	}
	s := newSummary(name, help, d, r.now)
	r.summaries = append(r.summaries, s)
	r.byName[name] = s
	return s
}

// Counters returns the counters in registration order.
func (r *Registry) Counters() []*Counter {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Counter(nil), r.counters...)
}

// Summaries returns the summaries in registration order.
func (r *Registry) Summaries() []*Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Summary(nil), r.summaries...)
}
