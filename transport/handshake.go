package transport

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The handshake opens every connection. The dialer (always the server
// with the higher id) sends a hello:
//
//	magic   [4]byte "CZAB"
//	version u8      (handshakeVersion)
//	lane    u8      (laneElection or laneQuorum)
//	zero    u16
//	from    u64 BE  (the dialer's server id)
//	to      u64 BE  (the id the dialer means to reach)
//
// and the acceptor answers with a reply:
//
//	magic   [4]byte "CZAB"
//	version u8
//	status  u8      (statusOK or why the hello is refused)
//	zero    u16
//	id      u64 BE  (the acceptor's server id)
//
// A refused dialer learns why (and logs it) instead of seeing a bare close.
// Anything that does not start with the magic, such as a ZooKeeper server
// or a port scanner, is closed without a reply.
var handshakeMagic = [4]byte{'C', 'Z', 'A', 'B'}

const (
	handshakeVersion = 1
	helloSize        = 24
	replySize        = 16
)

type hello struct {
	lane     lane
	from, to uint64
}

type handshakeStatus uint8

const (
	statusOK handshakeStatus = iota
	statusBadVersion
	statusBadLane
	statusUnknownID
	statusWrongTarget
	statusWrongDirection
)

func (s handshakeStatus) String() string {
	switch s {
	case statusOK:
		return "ok"
	case statusBadVersion:
		return "unsupported version"
	case statusBadLane:
		return "wrong port for this message class"
	case statusUnknownID:
		return "unknown server id"
	case statusWrongTarget:
		return "not the server the dialer meant to reach"
	case statusWrongDirection:
		return "the lower id must not dial"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

func (h hello) marshal() []byte {
	b := make([]byte, helloSize)
	copy(b, handshakeMagic[:])
	b[4] = handshakeVersion
	b[5] = byte(h.lane)
	binary.BigEndian.PutUint64(b[8:], h.from)
	binary.BigEndian.PutUint64(b[16:], h.to)
	return b
}

// readHello reads a hello. A bad magic is ErrHandshake without a status
// (not our protocol: no reply); a bad version comes back with
// statusBadVersion so the caller can answer it.
func readHello(r io.Reader) (hello, handshakeStatus, error) {
	var b [helloSize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return hello{}, 0, fmt.Errorf("%w: reading hello: %v", ErrHandshake, err)
	}
	if [4]byte(b[:4]) != handshakeMagic {
		return hello{}, 0, fmt.Errorf("%w: bad magic %q", ErrHandshake, b[:4])
	}
	if b[4] != handshakeVersion || b[6] != 0 || b[7] != 0 {
		return hello{}, statusBadVersion, fmt.Errorf("%w: version %d", ErrHandshake, b[4])
	}
	return hello{
		lane: lane(b[5]),
		from: binary.BigEndian.Uint64(b[8:]),
		to:   binary.BigEndian.Uint64(b[16:]),
	}, statusOK, nil
}

func marshalReply(status handshakeStatus, id uint64) []byte {
	b := make([]byte, replySize)
	copy(b, handshakeMagic[:])
	b[4] = handshakeVersion
	b[5] = byte(status)
	binary.BigEndian.PutUint64(b[8:], id)
	return b
}

func readReply(r io.Reader) (handshakeStatus, uint64, error) {
	var b [replySize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, fmt.Errorf("%w: reading reply: %v", ErrHandshake, err)
	}
	if [4]byte(b[:4]) != handshakeMagic || b[4] != handshakeVersion {
		return 0, 0, fmt.Errorf("%w: bad reply header %x", ErrHandshake, b[:5])
	}
	return handshakeStatus(b[5]), binary.BigEndian.Uint64(b[8:]), nil
}
