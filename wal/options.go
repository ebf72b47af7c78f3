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
	// SegmentSize is how large each segment is preallocated. Default 64 MiB.
	SegmentSize int64
	// BufferSize is how many bytes of encoded records Append accumulates
	// before it writes them to the file. Default 1 MiB.
	BufferSize int
	// MaxRecordSize bounds the payload Append accepts. Default 64 MiB.
	MaxRecordSize int
	// Logger receives repair notices. Nil discards them.
	Logger *slog.Logger
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
