package kvclient

// MaxCoalesce is maxCoalesce, for tests.
const MaxCoalesce = maxCoalesce

// QueuedGets is the number of Gets waiting in c's coalescing queues.
func QueuedGets(c *Client) int {
	c.coalesce.mu.Lock()
	defer c.coalesce.mu.Unlock()
	n := 0
	for _, l := range c.coalesce.lines {
		n += len(l.queue)
	}
	return n
}
