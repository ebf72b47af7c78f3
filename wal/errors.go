package wal

import "errors"

var (
	// ErrCorrupt marks damage the log cannot repair by itself: an invalid
	// byte anywhere but the tail of the last segment.
	ErrCorrupt = errors.New("wal: corrupt log")
	// ErrOutOfOrder is returned by Append for a zxid not greater than the
	// last one.
	ErrOutOfOrder = errors.New("wal: zxid not increasing")
	// ErrTooLarge is returned by Append for a payload above MaxRecordSize.
	ErrTooLarge = errors.New("wal: record too large")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("wal: log closed")
)
