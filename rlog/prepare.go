package rlog

// prepLog is the leader's view of a log with every prepared mutation
// applied, ahead of the committed state: it assigns append offsets, so
// that a proposal rarely fails at apply, and answers wrong offsets, sealed
// logs and retries without proposing anything.
type prepLog struct {
	exists   bool
	creating bool
	id       uint64
	end      int64
	sealed   bool
	last     lastAppend
}

// Prepare validates a request on the leader, in proposal order, against
// the state as it will be once every mutation prepared before it applies,
// and returns the mutation to propose: an append gets its offset and the
// log's id. dup is set (and nothing is to be proposed) for an append that
// repeats the log's last append (same expected offset, length and
// checksum): a client's retry, answered with the offset it got. Errors are
// *Error with the view's positions.
func (s *State) Prepare(req Mutation) (prop Mutation, dup *Result, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ValidName(req.Name) {
		return prop, nil, &Error{Code: CodeBadRequest, Log: req.Name, Detail: "a log's name is 1 to 255 letters, digits, '.', '_' or '-'"}
	}
	v := s.viewLocked(req.Name)
	verr := func(c Code, off int64) *Error {
		e := &Error{Code: c, Log: req.Name, End: v.end, Sealed: v.sealed, Offset: off, Limit: s.opts.MaxAppend}
		if l := s.logs[req.Name]; l != nil {
			e.Start, e.Committed = l.start, l.committed
		}
		return e
	}
	if req.Op != OpCreate && (!v.exists || v.creating) {
		return prop, nil, &Error{Code: CodeNotFound, Log: req.Name, Offset: req.Offset}
	}
	prop = Mutation{Op: req.Op, Name: req.Name, Offset: NoOffset}
	switch req.Op {
	case OpCreate:
		if v.exists {
			return prop, nil, verr(CodeExists, -1)
		}
		*v = prepLog{exists: true, creating: true}
	case OpAppend:
		n := int64(len(req.Payload))
		switch {
		case n == 0:
			return prop, nil, &Error{Code: CodeBadRequest, Log: req.Name, Detail: "empty append"}
		case n > s.opts.MaxAppend:
			return prop, nil, verr(CodeTooLarge, req.Offset)
		case v.sealed:
			return prop, nil, verr(CodeSealed, req.Offset)
		}
		sum := Checksum(req.Payload)
		if req.Offset != NoOffset && req.Offset != v.end {
			if req.Offset == v.last.off && n == v.last.n && sum == v.last.sum {
				return prop, &Result{Offset: v.last.off}, nil
			}
			return prop, nil, verr(CodeWrongOffset, req.Offset)
		}
		prop = Mutation{Op: OpAppend, Name: req.Name, Log: v.id, Offset: v.end, Length: n, Sum: sum, Payload: req.Payload}
		v.last = lastAppend{off: v.end, n: n, sum: sum}
		v.end += n
	case OpTrim:
		if req.Offset < 0 {
			return prop, nil, &Error{Code: CodeBadRequest, Log: req.Name, Detail: "negative trim offset"}
		}
		if req.Offset > v.end {
			return prop, nil, verr(CodeOutOfRange, req.Offset)
		}
		prop.Offset = req.Offset
	case OpSeal:
		v.sealed = true
	case OpDelete:
		*v = prepLog{}
	default:
		return prop, nil, &Error{Code: CodeBadRequest, Log: req.Name, Detail: "unknown operation"}
	}
	return prop, nil, nil
}

// viewLocked returns the leader's view of a log, derived from the applied
// state the first time.
func (s *State) viewLocked(name string) *prepLog {
	if v, ok := s.prep[name]; ok {
		return v
	}
	v := &prepLog{}
	if l := s.logs[name]; l != nil {
		*v = prepLog{exists: true, id: l.id, end: l.end, sealed: l.sealed, last: l.last}
	}
	s.prep[name] = v
	return v
}

// ResetPrepare forgets the leader's view: a new leader, or a proposal that
// will never commit, starts again from the applied state.
func (s *State) ResetPrepare() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.prep)
}

// settleLocked drops the view of a log once the applied state has caught
// up with it, so the view holds only logs with mutations in flight.
func (s *State) settleLocked(name string) {
	v, ok := s.prep[name]
	if !ok {
		return
	}
	l := s.logs[name]
	switch {
	case l == nil && !v.exists:
		delete(s.prep, name)
	case l != nil && v.exists && v.creating:
		v.creating, v.id, v.end, v.last = false, l.id, l.end, l.last
		if v.end == l.end && v.sealed == l.sealed {
			delete(s.prep, name)
		}
	case l != nil && v.exists && v.id == l.id && v.end == l.end && v.sealed == l.sealed:
		delete(s.prep, name)
	}
}
