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

// BusyLines is the number of c's coalescing lines taken: a call in
// flight, or a coalesced call's sender not yet done (it frees the line
// after answering its waiters).
func BusyLines(c *Client) int {
	c.coalesce.mu.Lock()
	defer c.coalesce.mu.Unlock()
	return len(c.coalesce.lines)
}

// QueuedPuts is the number of Puts waiting in c's put coalescing queues.
func QueuedPuts(c *Client) int {
	c.putCo.mu.Lock()
	defer c.putCo.mu.Unlock()
	n := 0
	for _, l := range c.putCo.lines {
		n += len(l.queue)
	}
	return n
}

// BusyPutLines is the number of c's put lines taken.
func BusyPutLines(c *Client) int {
	c.putCo.mu.Lock()
	defer c.putCo.mu.Unlock()
	return len(c.putCo.lines)
}
