package server

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corral-db/corral/wire"
)

var errSessionClosed = errors.New("session closed")

// handshake answers the ConnectRequest: a new session goes through the
// pipeline as a createSession transaction (it consumes a zxid); a
// reconnect is checked against the session table. It returns false if
// the connection must close.
func (c *conn) handshake(frame []byte) bool {
	s := c.s
	d := wire.Decoder{B: frame, Max: s.opts.MaxBuffer}
	var req wire.ConnectRequest
	if err := req.Decode(&d); err != nil {
		c.logDrop(fmt.Errorf("bad connect request: %w", err))
		return false
	}
	c.readOnlyByte = req.HasReadOnly
	if !s.serving.Load() {
		// An ensemble member without an established leader closes the
		// connection, as ZooKeeper does; the client tries another server.
		s.log.Debug("refusing session: not serving", "remote", c.remote)
		return false
	}
	s.mu.RLock()
	last := s.tree.LastZxid()
	s.mu.RUnlock()
	if req.LastZxidSeen > last {
		// The client has seen a newer state than ours: refuse without a
		// response so it tries another server.
		s.log.Info("refusing session: client has seen a newer zxid",
			"remote", c.remote, "clientZxid", hex(req.LastZxidSeen), "ourZxid", hex(last))
		return false
	}
	timeout := s.negotiateTimeout(req.Timeout)
	c.timeout = timeout
	if req.SessionID == 0 {
		return c.createSession(timeout)
	}
	sess := s.sessions.get(req.SessionID)
	if sess == nil && !s.standalone && !s.rep.isLeader() {
		// The session may be newer than this learner's tree: created
		// through another server a moment ago. Catch up with the
		// leader first, as ZooKeeper's learner revalidates with it.
		if s.rep.catchUp(time.Duration(timeout) * time.Millisecond) {
			sess = s.sessions.get(req.SessionID)
		}
	}
	if sess == nil || sess.closing.Load() || !bytes.Equal(req.Passwd, sessionPassword(req.SessionID)) {
		c.refuseSession()
		return false
	}
	s.sessions.touch(sess)
	sess.timeout.Store(timeout)
	switch s.moveSession(c, sess) {
	case moveFailed:
		return false
	case moveRefused:
		c.refuseSession()
		return false
	}
	if s.sessions.get(sess.id) != sess || sess.closing.Load() {
		// Closed while we waited: its closeSession was prepped before
		// the answer (expiry, or a close from the old connection).
		c.refuseSession()
		return false
	}
	c.sendConnectResponse(timeout, sess.id, sessionPassword(sess.id))
	return true
}

// refuseSession answers a reconnect to a session that expired, is
// unknown or has another password: timeout 0, id 0, zero password, then
// close.
func (c *conn) refuseSession() {
	c.sendConnectResponse(0, 0, make([]byte, 16))
	c.out.finish()
}

// attach makes c the session's connection, closing any other one that
// held it (PROTOCOL §3: the old socket gets EOF).
func (c *conn) attach(sess *session) {
	c.sess.Store(sess)
	c.stats.established.Store(c.s.opts.Now().UnixMilli())
	if old := sess.owner.Swap(c); old != nil && old != c {
		old.close(errors.New("session moved to another connection"))
	}
}

func (c *conn) sendConnectResponse(timeout int32, sid int64, passwd []byte) {
	resp := wire.ConnectResponse{
		Timeout:     timeout,
		SessionID:   sid,
		Passwd:      passwd,
		HasReadOnly: c.readOnlyByte,
	}
	c.out.frame(resp.Encode)
}

// createSession commits a createSession transaction and waits for it, so
// the session exists on disk before the client learns its id.
func (c *conn) createSession(timeout int32) bool {
	s := c.s
	id := s.sessions.newID()
	done := make(chan bool, 1)
	r := &request{
		c:    c,
		op:   wire.OpCreateSession,
		sid:  id,
		kind: kindWrite,
		recv: time.Now(),
	}
	r.timeout = timeout
	r.onDone = func(r *request) {
		sess := s.sessions.get(id)
		if sess == nil {
			done <- false
			return
		}
		c.attach(sess)
		c.sendConnectResponse(timeout, id, sessionPassword(id))
		done <- true
	}
	if !s.acquire() {
		return false
	}
	defer s.release()
	if !s.submit(r) {
		return false
	}
	select {
	case ok := <-done:
		return ok
	case <-s.ctx.Done():
		return false
	}
}

// negotiateTimeout clamps the requested session timeout to the server's
// bounds.
func (s *Server) negotiateTimeout(req int32) int32 {
	lo := int32(s.opts.MinSessionTimeout.Milliseconds())
	hi := int32(s.opts.MaxSessionTimeout.Milliseconds())
	return max(lo, min(hi, req))
}

// auth handles an AuthPacket at once, outside the request order, as
// ZooKeeper does. A refused one is answered with AuthFailed and the
// connection is closed.
func (c *conn) handleAuth(r *request) bool {
	s := c.s
	p := r.rec.(*wire.AuthPacket)
	ok := false
	switch p.Scheme {
	case "digest":
		id := digestID(string(p.Auth))
		if s.opts.SuperDigest != "" && id == s.opts.SuperDigest {
			c.addAuth(wire.Id{Scheme: "super", ID: ""})
		}
		c.addAuth(wire.Id{Scheme: "digest", ID: id})
		ok = true
	case "ip":
		c.addAuth(wire.Id{Scheme: "ip", ID: c.ip})
		ok = true
	}
	if ok {
		s.log.Info("auth success", "session", hex(c.sessionID()), "scheme", p.Scheme, "remote", c.remote)
		c.reply(r.xid, 0, wire.CodeOK, nil)
		return true
	}
	s.stats.authFail.Add(1)
	s.log.Warn("auth failed: no provider for scheme", "scheme", p.Scheme, "remote", c.remote)
	c.reply(r.xid, 0, wire.CodeAuthFailed, nil)
	c.out.finish()
	return false
}

// digestID is DigestAuthenticationProvider.generateDigest: the user part,
// a colon, and base64(SHA1(user:password)).
func digestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}
