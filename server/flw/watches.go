package flw

import (
	"bytes"
	"slices"
	"strconv"
)

// The watch words print WatchManager's data-watch tables; WatchCommand
// adds one println after each. ZooKeeper iterates hash maps, so its order
// is arbitrary; ours is sorted so output is reproducible.

// renderWchs: "N connections watching M paths\nTotal watches:T\n".
func renderWchs(b *bytes.Buffer, s *State) {
	w := s.Watches
	conns, paths, total := w.Connections, w.Paths, w.Total
	if conns == 0 && paths == 0 && total == 0 {
		conns, paths, total = summarize(w.BySession)
	}
	b.WriteString(strconv.Itoa(conns))
	b.WriteString(" connections watching ")
	b.WriteString(strconv.Itoa(paths))
	b.WriteString(" paths\nTotal watches:")
	b.WriteString(strconv.Itoa(total))
	b.WriteByte('\n')
}

func summarize(bySession map[int64][]string) (conns, paths, total int) {
	seen := make(map[string]struct{})
	for _, ps := range bySession {
		if len(ps) == 0 {
			continue
		}
		conns++
		total += len(ps)
		for _, p := range ps {
			seen[p] = struct{}{}
		}
	}
	return conns, len(seen), total
}

// renderWchc: per session "0x<sid>" then "\t<path>" lines; then a blank line.
func renderWchc(b *bytes.Buffer, s *State) {
	for _, sid := range sortedSessions(s.Watches.BySession) {
		paths := s.Watches.BySession[sid]
		if len(paths) == 0 {
			continue // WatchManager drops a watcher with no paths
		}
		b.WriteString("0x")
		b.WriteString(javaHex(sid))
		b.WriteByte('\n')
		for _, p := range paths {
			b.WriteByte('\t')
			b.WriteString(p)
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
}

// renderWchp: per path "<path>" then "\t0x<sid>" lines; then a blank line.
func renderWchp(b *bytes.Buffer, s *State) {
	byPath := make(map[string][]int64)
	for _, sid := range sortedSessions(s.Watches.BySession) {
		for _, p := range s.Watches.BySession[sid] {
			// A session appears once per path even if listed twice.
			if l := byPath[p]; len(l) == 0 || l[len(l)-1] != sid {
				byPath[p] = append(l, sid)
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte('\n')
		for _, sid := range byPath[p] {
			b.WriteString("\t0x")
			b.WriteString(javaHex(sid))
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
}

func sortedSessions[V any](m map[int64]V) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
