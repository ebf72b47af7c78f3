package wal

import "log/slog"

// Defaults for Options fields left zero.
const (
	DefaultSegmentSize   = 64 << 20
	DefaultBufferSize    = 1 << 20
	DefaultMaxRecordSize = 64 << 20
)

// Options configures a Log.
type Options struct {
	// SegmentSize is how large each segment is preallocated, by writing
	// zeros ahead of time (see the package documentation). Default 64 MiB,
	// ZooKeeper's preAllocSize. The size does not change what an append
	// costs: every segment is zero-filled once, so the zeros written equal
	// the log written whatever the size. It sets how often a roll happens
	// (the first Sync after one also syncs the directory, a few hundred
	// microseconds), how long each background zero-fill competes with
	// appends (100-200 ms for 64 MiB on a VM disk), the disk held by the
	// spare, and how finely PurgeBefore can free space.
	SegmentSize int64
	// BufferSize is how many bytes of encoded records Append accumulates
	// before it writes them to the file. Default 1 MiB.
	BufferSize int
	// MaxRecordSize bounds the payload Append accepts. Default 64 MiB.
	MaxRecordSize int
	// Logger receives repair notices. Nil discards them.
	Logger *slog.Logger
	// PrepareInline zero-fills each new segment when an Append needs it,
	// in that Append, instead of ahead of time in a goroutine the Log
	// owns. Every roll then stalls its Append for the zero-fill, but the
	// Log starts no goroutine and its file operations happen in an order
	// fixed by its calls alone, which deterministic tests want.
	PrepareInline bool
}

func (o Options) withDefaults() Options {
	if o.SegmentSize <= 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.BufferSize <= 0 {
		o.BufferSize = DefaultBufferSize
	}
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = DefaultMaxRecordSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
