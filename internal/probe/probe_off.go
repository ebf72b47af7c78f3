//go:build !probe

package probe

// Enabled reports whether marks are recorded.
const Enabled = false

// Mark does nothing without the probe build tag.
func Mark(stage string, zxid int64) {}

// Dump does nothing without the probe build tag.
func Dump() error { return nil }
