package launch

import "time"

// Bounds on what the flags accept: every load loop is bounded.
const (
	MaxConns    = 4096
	MaxInflight = 4096
	MaxPhase    = 10 * time.Minute
)
