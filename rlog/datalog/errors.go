package datalog

import "errors"

var (
	// ErrCorrupt marks damage the data log cannot repair by itself: an
	// invalid byte anywhere but the tail of the last segment, or a record
	// whose checksum fails when read.
	ErrCorrupt = errors.New("datalog: corrupt data log")
	// ErrEmpty is returned by Append for an empty payload.
	ErrEmpty = errors.New("datalog: empty payload")
	// ErrTooLarge is returned by Append for a payload above MaxRecordSize.
	ErrTooLarge = errors.New("datalog: record too large")
	// ErrNotFound is returned by Read for a position in no segment.
	ErrNotFound = errors.New("datalog: no record at position")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("datalog: closed")
)
