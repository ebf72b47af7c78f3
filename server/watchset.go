package server

// watchSet is the connections watching one path in one table, with their
// mode bits. Most paths have one watcher or a few: a map per path cost
// about 180 bytes for one (a million watches on a million paths took
// 307 bytes a watch), so up to watchSetSmall watchers are a slice,
// searched linearly, and a map only above that, where a linear search
// would be slow. It is not safe for concurrent use; watchManager.mu
// guards it.
type watchSet struct {
	// path is the table's copy of the path, shared with the manager's
	// per-connection index.
	path  string
	small []watcher       // the watchers while big is nil
	big   map[*conn]uint8 // the watchers once there are more than watchSetSmall
}

type watcher struct {
	c    *conn
	mode uint8
}

// watchSetSmall is the most watchers a set keeps in its slice.
const watchSetSmall = 16

func (s *watchSet) len() int {
	if s.big != nil {
		return len(s.big)
	}
	return len(s.small)
}

// get returns c's mode bits (0 if c is not in the set).
func (s *watchSet) get(c *conn) uint8 {
	if s.big != nil {
		return s.big[c]
	}
	for i := range s.small {
		if s.small[i].c == c {
			return s.small[i].mode
		}
	}
	return 0
}

// set gives c the mode bits; 0 removes c.
func (s *watchSet) set(c *conn, mode uint8) {
	if s.big != nil {
		if mode == 0 {
			delete(s.big, c)
		} else {
			s.big[c] = mode
		}
		return
	}
	for i := range s.small {
		if s.small[i].c != c {
			continue
		}
		if mode != 0 {
			s.small[i].mode = mode
			return
		}
		last := len(s.small) - 1
		s.small[i] = s.small[last]
		s.small[last] = watcher{}
		s.small = s.small[:last]
		return
	}
	if mode == 0 {
		return
	}
	if len(s.small) < watchSetSmall {
		s.small = append(s.small, watcher{c, mode})
		return
	}
	s.big = make(map[*conn]uint8, 2*watchSetSmall)
	for _, w := range s.small {
		s.big[w.c] = w.mode
	}
	s.big[c] = mode
	s.small = nil
}

// each calls f for every watcher and sets its bits to what f returns (0
// removes it). f must not modify the set otherwise.
func (s *watchSet) each(f func(c *conn, mode uint8) uint8) {
	if s.big != nil {
		for c, mode := range s.big {
			if nm := f(c, mode); nm == 0 {
				delete(s.big, c)
			} else if nm != mode {
				s.big[c] = nm
			}
		}
		return
	}
	j := 0
	for _, w := range s.small {
		if w.mode = f(w.c, w.mode); w.mode != 0 {
			s.small[j] = w
			j++
		}
	}
	clear(s.small[j:])
	s.small = s.small[:j]
}
