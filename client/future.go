package client

import "context"

// Future is the result of an asynchronous call. Futures of one Conn
// complete in the order their calls were made (ZooKeeper's FIFO client
// order): when one is done, every future created before it on the same
// Conn is done too. Nothing needs to wait on a Future; an ignored one is
// simply collected.
type Future[T any] struct {
	done chan struct{}
	val  T
	err  error
	conv func(*Conn, *request) (T, error)
}

// Done is closed when the result is available.
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// Result waits for the result.
func (f *Future[T]) Result() (T, error) {
	<-f.done
	return f.val, f.err
}

// Wait waits for the result or for ctx to end. A context that ends first
// does not cancel the request; the future still completes.
func (f *Future[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func (f *Future[T]) complete(c *Conn, r *request) {
	f.val, f.err = f.conv(c, r)
	f.conv = nil
	close(f.done)
}

// async submits r and returns its future; conv turns the completed
// request into the result.
func async[T any](c *Conn, r *request, conv func(*Conn, *request) (T, error)) *Future[T] {
	f := &Future[T]{done: make(chan struct{}), conv: conv}
	r.fut = f
	if err := c.submit(nil, r); err != nil {
		c.recycle(r)
		f.err = err
		close(f.done)
	}
	return f
}

// failed is a future that has already failed (a request that could not be
// built, e.g. a relative path).
func failed[T any](err error) *Future[T] {
	f := &Future[T]{done: make(chan struct{}), err: err}
	close(f.done)
	return f
}

// call is the blocking counterpart of async.
func call[T any](ctx context.Context, c *Conn, r *request, conv func(*Conn, *request) (T, error)) (T, error) {
	if err := c.do(ctx, r); err != nil {
		var zero T
		return zero, err
	}
	v, err := conv(c, r)
	c.recycle(r)
	return v, err
}
