package datalog

import (
	"log/slog"
	"time"
)

// Options configure a data log. The zero value is usable.
type Options struct {
	// SegmentSize is the preallocated size of a segment (64 MiB if 0).
	SegmentSize int64
	// MaxInflight bounds the bytes written but not yet synced (64 MiB if
	// 0): Append blocks while a record would go above it. A record larger
	// than the bound is written alone, once nothing else is in flight.
	MaxInflight int64
	// SyncBytes and SyncDelay are when the flusher syncs without being
	// asked: once SyncBytes are written and not synced (1 MiB if 0,
	// capped at MaxInflight), or SyncDelay after the oldest such write
	// (2 ms if 0). A waiter (WaitSynced, an Append short of room) gets a
	// sync at once. Between them, writes accumulate into one group
	// instead of each starting a sync of its own.
	SyncBytes int64
	SyncDelay time.Duration
	// MaxRecordSize bounds one payload (64 MiB if 0).
	MaxRecordSize int
	// PrepareInline allocates each new segment in the Append that rolls
	// to it instead of in a goroutine ahead of time (tests use it to make
	// every step of a roll happen in a known order).
	PrepareInline bool
	// NoFlusher starts no flusher goroutine: the caller syncs with Flush.
	// Tests use it to crash between a write and its sync deterministically.
	NoFlusher bool
	// OnSync, if set, is called by the flusher (never under a lock of the
	// Log) with each newly synced end position, in increasing order.
	OnSync func(end Pos)
	// OnRecover, if set, is called by Open for every record it recovers,
	// in order, with the record's position, meta and payload length.
	OnRecover func(p Pos, m Meta, n int)
	// Logger receives repair notices. Nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.SegmentSize <= 0 {
		o.SegmentSize = 64 << 20
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = 64 << 20
	}
	if o.SyncBytes <= 0 {
		o.SyncBytes = 1 << 20
	}
	o.SyncBytes = min(o.SyncBytes, o.MaxInflight)
	if o.SyncDelay <= 0 {
		o.SyncDelay = 2 * time.Millisecond
	}
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = 64 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
