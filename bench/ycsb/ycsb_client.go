package ycsb

import (
	"encoding/binary"
	"fmt"

	"github.com/corral-db/corral/bench/load"
	"github.com/corral-db/corral/wire"
)

// ycsbSession is one YCSB thread's session: synchronous requests on the
// generator's own connection (proto.go's encoders, conn's frame reader),
// with one reusable encoder, so an operation costs one write syscall and
// usually one read, and allocates nothing. A scan's getData requests go out
// in one write. There are no per-request deadlines: the run closes the
// socket when it stalls past its drain allowance, which ends a blocked
// read.
type ycsbSession struct {
	c    *load.Conn
	e    wire.Encoder
	xids []int32
}

func newYCSBSession(c *load.Conn) *ycsbSession { return &ycsbSession{c: c} }

// send writes what has been encoded.
func (s *ycsbSession) send() error {
	_, err := s.c.NetConn.Write(s.e.B)
	s.e.Reset()
	return err
}

// reply reads the reply to xid, skipping notifications and pings, and
// returns its error code and body (valid until the next read).
func (s *ycsbSession) reply(xid int32) (wire.Code, []byte, error) {
	for {
		body, err := s.c.ReadFrame()
		if err != nil {
			return 0, nil, err
		}
		if len(body) < load.ReplyHeaderSize {
			return 0, nil, fmt.Errorf("%w: %d-byte reply", load.ErrBadFrame, len(body))
		}
		h := load.DecodeReplyHeader(body)
		switch {
		case h.Xid == wire.XidNotification || h.Xid == wire.XidPing:
			continue
		case h.Xid != xid:
			return 0, nil, fmt.Errorf("%w: got %d, want %d", load.ErrXidMismatch, h.Xid, xid)
		}
		return wire.Code(h.Err), body[load.ReplyHeaderSize:], nil
	}
}

// getDataReply splits a getData reply body into the data and the stat's
// version. The body is buffer data (int32 length, bytes) then Stat, whose
// version follows four longs.
func getDataReply(body []byte) (data []byte, version int32, err error) {
	if len(body) < 4 {
		return nil, 0, fmt.Errorf("%w: getData reply of %d bytes", load.ErrBadFrame, len(body))
	}
	n := int(int32(binary.BigEndian.Uint32(body)))
	if n < 0 {
		n = 0 // null data
	}
	const versionAt = 4 * 8
	if len(body) < 4+n+wire.StatSize {
		return nil, 0, fmt.Errorf("%w: getData reply of %d bytes for %d bytes of data", load.ErrBadFrame, len(body), n)
	}
	data = body[4 : 4+n]
	version = int32(binary.BigEndian.Uint32(body[4+n+versionAt:]))
	return data, version, nil
}

// GetData reads path; data is valid until the next request.
func (s *ycsbSession) getData(path []byte) (code wire.Code, data []byte, version int32, err error) {
	xid := s.c.NextXid()
	load.AppendGetData(&s.e, xid, path)
	if err := s.send(); err != nil {
		return 0, nil, 0, err
	}
	code, body, err := s.reply(xid)
	if err != nil || code != wire.CodeOK {
		return code, nil, 0, err
	}
	data, version, err = getDataReply(body)
	return code, data, version, err
}

// setData writes data to path if its version is version (-1: any).
func (s *ycsbSession) setData(path, data []byte, version int32) (wire.Code, error) {
	xid := s.c.NextXid()
	at := load.BeginFrame(&s.e)
	load.AppendHeader(&s.e, xid, wire.OpSetData)
	load.AppendPath(&s.e, path)
	s.e.Buffer(data)
	s.e.Int(version)
	load.EndFrame(&s.e, at)
	if err := s.send(); err != nil {
		return 0, err
	}
	code, _, err := s.reply(xid)
	return code, err
}

// create makes a persistent node.
func (s *ycsbSession) create(path, data []byte) (wire.Code, error) {
	xid := s.c.NextXid()
	load.AppendCreate(&s.e, xid, path, data)
	if err := s.send(); err != nil {
		return 0, err
	}
	code, _, err := s.reply(xid)
	return code, err
}

// getMany sends a getData for each path in one write and reads the
// replies in order. It returns how many nodes were read and the first
// error code other than NoNode (a record that does not exist is skipped,
// as a scan of a store returns what there is).
func (s *ycsbSession) getMany(paths [][]byte) (read int, code wire.Code, err error) {
	s.xids = s.xids[:0]
	for _, p := range paths {
		xid := s.c.NextXid()
		load.AppendGetData(&s.e, xid, p)
		s.xids = append(s.xids, xid)
	}
	if err := s.send(); err != nil {
		return 0, 0, err
	}
	for _, xid := range s.xids {
		c, _, err := s.reply(xid)
		if err != nil {
			return read, code, err
		}
		switch {
		case c == wire.CodeOK:
			read++
		case c != wire.CodeNoNode && code == wire.CodeOK:
			code = c
		}
	}
	return read, code, nil
}
