package rlog

import (
	"errors"
	"fmt"
)

// Code classifies an operation's failure. The codes are part of the
// replicated result of a mutation: every replica decides the same one.
type Code uint8

const (
	CodeOK          Code = iota
	CodeNotFound         // no log of that name
	CodeExists           // create of a name in use
	CodeWrongOffset      // an append's expected offset is not the log's end
	CodeTruncated        // a read below the log's start
	CodeOutOfRange       // a read or trim past the log's end
	CodeSealed           // an append to a sealed log
	CodeTooLarge         // an append above the size limit
	CodeBadRequest       // a malformed request (a bad name, an empty append)
)

var codeNames = [...]string{
	CodeOK: "ok", CodeNotFound: "not found", CodeExists: "exists",
	CodeWrongOffset: "wrong offset", CodeTruncated: "truncated",
	CodeOutOfRange: "out of range", CodeSealed: "sealed",
	CodeTooLarge: "too large", CodeBadRequest: "bad request",
}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Error is a failed log operation with the log's positions when it failed,
// so that a client can act on it (retry at End, read from Start) without
// another round trip.
type Error struct {
	Code      Code
	Log       string
	Start     int64 // the log's first readable offset
	End       int64 // the offset the next append gets
	Committed int64 // the end of what reads may return
	Sealed    bool
	Offset    int64 // the offset the request named (expected, read or trim), -1 if none
	Limit     int64 // for CodeTooLarge: the largest append accepted
	Detail    string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("rlog: %s: log %q", e.Code, e.Log)
	switch e.Code {
	case CodeWrongOffset:
		s += fmt.Sprintf(": expected offset %d, the log ends at %d", e.Offset, e.End)
	case CodeTruncated:
		s += fmt.Sprintf(": offset %d is below the log's start %d", e.Offset, e.Start)
	case CodeOutOfRange:
		s += fmt.Sprintf(": offset %d is past the log's end %d", e.Offset, e.End)
	case CodeSealed:
		s += fmt.Sprintf(": sealed at %d", e.End)
	case CodeTooLarge:
		s += fmt.Sprintf(": the limit is %d bytes", e.Limit)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is makes errors.Is(err, ErrSealed) and the like match by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Log == "" && t.Code == e.Code
}

// Sentinels for errors.Is: each matches any *Error of its code.
var (
	ErrNotFound    = &Error{Code: CodeNotFound}
	ErrExists      = &Error{Code: CodeExists}
	ErrWrongOffset = &Error{Code: CodeWrongOffset}
	ErrTruncated   = &Error{Code: CodeTruncated}
	ErrOutOfRange  = &Error{Code: CodeOutOfRange}
	ErrSealed      = &Error{Code: CodeSealed}
	ErrTooLarge    = &Error{Code: CodeTooLarge}
	ErrBadRequest  = &Error{Code: CodeBadRequest}
)

// CodeOf returns the Code of err: CodeOK for nil, the code of an *Error,
// and ok false for any other error.
func CodeOf(err error) (Code, bool) {
	if err == nil {
		return CodeOK, true
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}
