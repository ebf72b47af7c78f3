package harness

import (
	"context"
	"time"

	"github.com/corral-db/corral/internal/proc"
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
	return proc.FourLetter(context.Background(), addr, req, flwTimeout)
}
