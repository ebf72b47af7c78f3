package harness

import (
	"io"
	"net"
	"time"
)

// flwTimeout bounds one four-letter-word exchange.
const flwTimeout = 10 * time.Second

// FourLetter opens a new connection to addr, sends word (normally four
// ASCII letters) and reads until the server closes the connection, which is
// how ZooKeeper ends every four-letter-word answer.
func FourLetter(addr, word string) (string, error) {
	return FourLetterBytes(addr, []byte(word))
}

// FourLetterBytes is FourLetter with arbitrary request bytes.
func FourLetterBytes(addr string, req []byte) (string, error) {
	return fourLetter(addr, req, flwTimeout)
}

func fourLetter(addr string, req []byte, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := c.Write(req); err != nil {
		return "", err
	}
	out, err := io.ReadAll(c)
	return string(out), err
}
