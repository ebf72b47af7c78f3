package console

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/corral-db/corral/client"
)

// sessionCache holds one ZooKeeper session per set of credentials, so a
// page's requests reuse a session instead of opening one per click. It
// keys sessions by a hash of the credentials (the password itself is
// kept only inside the client, which must resend it on reconnect). A
// janitor goroutine closes sessions unused for ConnIdle and exits when
// the cache is empty, so an unwatched console holds no session.
type sessionCache struct {
	c *Console

	mu sync.Mutex
	// Guarded by mu.
	entries     map[[32]byte]*sessionEntry
	janitorLive bool
	closed      bool
}

type sessionEntry struct {
	ready chan struct{} // closed when conn/err are set
	conn  *client.Conn
	err   error
	used  time.Time // guarded by sessionCache.mu
}

func newSessionCache(c *Console) *sessionCache {
	return &sessionCache{c: c, entries: make(map[[32]byte]*sessionEntry)}
}

func credKey(cr credentials) [32]byte {
	return sha256.Sum256([]byte(cr.user + "\x00" + cr.password))
}

// errClosed is returned once the console is closed.
var errClosed = &apiError{Status: http.StatusServiceUnavailable, Code: "CLOSED", Message: "console closed"}

// get returns a live session for cr, connecting if needed.
func (s *sessionCache) get(ctx context.Context, cr credentials) (*client.Conn, error) {
	key := credKey(cr)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	e := s.entries[key]
	if e != nil {
		select {
		case <-e.ready:
			if e.err != nil || dead(e.conn) {
				// A failed connect or a dead session: replace it.
				delete(s.entries, key)
				s.closeLaterLocked(e)
				e = nil
			}
		default:
		}
	}
	if e == nil {
		s.evictLocked()
		e = &sessionEntry{ready: make(chan struct{})}
		s.entries[key] = e
		s.c.wg.Add(1)
		go s.connect(e, cr)
		if !s.janitorLive {
			s.janitorLive = true
			s.c.wg.Add(1)
			go s.janitor()
		}
	}
	e.used = time.Now()
	s.mu.Unlock()

	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.conn, nil
}

func dead(c *client.Conn) bool {
	switch c.State() {
	case client.StateExpired, client.StateClosed, client.StateAuthFailed:
		return true
	}
	return false
}

// connect opens the session for e. It is bounded by the console's
// context and RequestTimeout; a failure is remembered until the next get.
func (s *sessionCache) connect(e *sessionEntry, cr credentials) {
	defer s.c.wg.Done()
	ctx, cancel := context.WithTimeout(s.c.ctx, s.c.cfg.RequestTimeout)
	defer cancel()
	opts := []client.Option{client.SessionTimeout(30 * time.Second), client.Logger(s.c.cfg.Logger)}
	if !cr.anonymous() {
		opts = append(opts, client.AuthDigest(cr.user, cr.password))
	}
	conn, err := client.Connect(ctx, s.c.cfg.Servers, opts...)
	if errors.Is(err, client.ErrAuthFailed) {
		err = &apiError{Status: http.StatusForbidden, Code: "AUTHFAILED", Message: "the server refused the credentials"}
	} else if err != nil {
		err = &apiError{Status: http.StatusServiceUnavailable, Code: "CONNECTIONLOSS", Message: "no member of the ensemble accepted a session: " + err.Error()}
	}
	s.mu.Lock()
	e.conn, e.err = conn, err
	closed := s.closed
	s.mu.Unlock()
	close(e.ready)
	if closed && conn != nil {
		conn.Close()
	}
}

// evictLocked closes the least recently used session when the cache is
// full.
func (s *sessionCache) evictLocked() {
	if len(s.entries) < s.c.cfg.MaxSessions {
		return
	}
	var oldKey [32]byte
	var old *sessionEntry
	for k, e := range s.entries {
		if old == nil || e.used.Before(old.used) {
			oldKey, old = k, e
		}
	}
	delete(s.entries, oldKey)
	s.closeLaterLocked(old)
}

// closeLaterLocked closes e's session in the background (Close waits up
// to 2/3 of the session timeout for an unreachable server); Console.Close
// waits for it. Called with mu held before closeAll, so the WaitGroup is
// never added to while Close waits on an empty one.
func (s *sessionCache) closeLaterLocked(e *sessionEntry) {
	s.c.wg.Add(1)
	go func() {
		defer s.c.wg.Done()
		closeWhenReady(e)
	}()
}

func closeWhenReady(e *sessionEntry) {
	<-e.ready
	if e.conn != nil {
		e.conn.Close()
	}
}

// janitor closes idle sessions; it exits when none is left or the console
// closes.
func (s *sessionCache) janitor() {
	defer s.c.wg.Done()
	idle := s.c.cfg.ConnIdle
	t := time.NewTicker(max(idle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.c.ctx.Done():
			return
		case now := <-t.C:
			s.mu.Lock()
			for k, e := range s.entries {
				if now.Sub(e.used) > idle && !s.closed {
					delete(s.entries, k)
					s.closeLaterLocked(e)
				}
			}
			if len(s.entries) == 0 {
				s.janitorLive = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
		}
	}
}

// closeAll closes every session; later gets fail.
func (s *sessionCache) closeAll() {
	s.mu.Lock()
	s.closed = true
	entries := s.entries
	s.entries = map[[32]byte]*sessionEntry{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		select {
		case <-e.ready:
			if e.conn != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					e.conn.Close()
				}()
			}
		default:
			// connect sees closed and closes its own conn.
		}
	}
	wg.Wait()
}

// open reports how many sessions are cached (for tests and the info
// endpoint).
func (s *sessionCache) open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
