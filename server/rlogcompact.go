package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/corral-db/corral/rlog/datalog"
)

// Local compaction of sparse data-log segments (issue 24, §4: "whole
// segments dropped; sparse ones compacted locally"; docs/design/rlog.md,
// "Space"). Releasing records drops a segment once none of its records is
// live, but logs trimmed at different rates share segments: one record
// of a log that is never trimmed keeps a whole 64 MiB segment. A segment
// at most 1/compactLiveDiv live is compacted: its live records are
// copied to the current segment, and the original is released once the
// copy is durable, which drops the segment.
//
// Positions are each member's own (the tree's references name a zxid,
// a length and a checksum), so a copy changes only this member's index.
// The steps, and what a crash after each leaves:
//
//  1. read a chunk of the segment's live records (nothing changed);
//  2. under logData.mu, append each record still live at the position
//     read and point the index at the copy (a crash loses the unsynced
//     copies at most: open truncates a torn tail, and the originals are
//     still in their segment);
//  3. sync the data log (a crash now leaves both records of a zxid:
//     open's scan keeps the later one, the copy, and releases the other,
//     as it does for a proposal written twice);
//  4. release the originals, which drops the segment.
//
// A reader that found an original's position before step 2 may find its
// segment gone by step 4: logData.readRecord looks the zxid up again.

// compactLiveDiv: a segment whose live bytes are at most 1/compactLiveDiv
// of its written bytes is compacted.
const compactLiveDiv = 4

// compactChunk bounds the payload bytes a compaction holds in memory and
// appends while holding logData.mu at once.
const compactChunk = 8 << 20

// compactSparse compacts every sparse segment other than the current one,
// oldest first, until ctx ends. It returns the segments compacted and the
// records copied. The caller is the purge goroutine, after releaseUpTo.
func (d *logData) compactSparse(ctx context.Context) (segs, moved int, err error) {
	if d.dl == nil {
		return 0, 0, nil
	}
	for _, seq := range d.sparseSegments() {
		if ctx.Err() != nil {
			return segs, moved, nil
		}
		n, err := d.compactSegment(ctx, seq)
		moved += n
		if err != nil {
			return segs, moved, err
		}
		segs++
	}
	return segs, moved, nil
}

// sparseSegments returns the sequence numbers of the segments to compact.
func (d *logData) sparseSegments() []uint64 {
	infos := d.dl.Segments()
	var out []uint64
	// The last segment is the current one, written to.
	for _, s := range infos[:max(len(infos)-1, 0)] {
		if s.Live > 0 && s.Live*compactLiveDiv <= s.End {
			out = append(out, s.Seq)
		}
	}
	return out
}

// compactSegment copies segment seq's live records to the current
// segment and releases the originals (the steps above). It returns the
// records copied.
func (d *logData) compactSegment(ctx context.Context, seq uint64) (int, error) {
	d.mu.Lock()
	var recs []rec
	d.idx.all(func(r rec) {
		if r.pos.Seg == seq {
			recs = append(recs, r)
		}
	})
	d.mu.Unlock()
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.zxid, b.zxid) })

	var moved []rec
	var werr error
	for len(recs) > 0 && werr == nil && ctx.Err() == nil {
		k, n := 0, 0
		for k < len(recs) && (k == 0 || n+recs[k].n <= compactChunk) {
			n += recs[k].n
			k++
		}
		chunk := recs[:k]
		recs = recs[k:]
		metas := make([]datalog.Meta, len(chunk))
		payloads := make([][]byte, len(chunk))
		for i, r := range chunk {
			m, b, err := d.dl.Read(r.pos)
			if errors.Is(err, datalog.ErrNotFound) {
				continue // released meanwhile, and its segment with it
			}
			if err != nil {
				werr = err
				break
			}
			if m.Zxid != r.zxid {
				werr = fmt.Errorf("rlog: the record at %s is not %s", r.pos, hex(r.zxid))
				break
			}
			metas[i], payloads[i] = m, b
		}
		if werr == nil {
			werr = d.compactHook("read")
		}
		d.mu.Lock()
		for i, r := range chunk {
			if payloads[i] == nil || werr != nil {
				continue
			}
			if now, ok := d.idx.find(r.zxid); !ok || now.pos != r.pos {
				continue // released (or written again) since it was read
			}
			p, _, err := d.dl.AppendSummed(ctx, metas[i], payloads[i], crc32.Checksum(payloads[i], castagnoli))
			if err != nil {
				werr = fmt.Errorf("rlog data log: copy of %s: %w", hex(r.zxid), err)
				break
			}
			d.idx.release(r.zxid)
			d.idx.add(r.zxid, p, r.n)
			moved = append(moved, r)
		}
		d.mu.Unlock()
		if werr == nil {
			werr = d.compactHook("copied")
		}
	}
	if len(moved) > 0 {
		// The copies durable before the originals go.
		if _, err := d.dl.Flush(); err != nil {
			return len(moved), errors.Join(werr, fmt.Errorf("rlog data log: sync of the copies: %w", err))
		}
		if err := d.compactHook("synced"); err != nil {
			return len(moved), errors.Join(werr, err)
		}
		for _, r := range moved {
			if err := d.dl.Release(r.pos.Seg, datalog.RecordSize(r.n)); err != nil {
				werr = errors.Join(werr, err)
			}
		}
		d.mu.Lock()
		d.idx.compact()
		d.mu.Unlock()
	}
	return len(moved), werr
}

// compactHook runs the test hook between compaction steps, if any.
func (d *logData) compactHook(step string) error {
	if d.onCompactStep == nil {
		return nil
	}
	return d.onCompactStep(step)
}

// readRecord returns the payload of zxid's record. Compaction may move a
// record between the lookup and the read and drop the segment it was
// in; the read then looks it up again.
func (d *logData) readRecord(zxid int64) (datalog.Meta, []byte, datalog.Pos, error) {
	var last datalog.Pos
	for try := 0; ; try++ {
		d.mu.Lock()
		r, ok := d.idx.find(zxid)
		d.mu.Unlock()
		if !ok {
			return datalog.Meta{}, nil, datalog.Pos{}, fmt.Errorf("%w: %s", errNoPayload, hex(zxid))
		}
		m, b, err := d.dl.Read(r.pos)
		if err != nil && errors.Is(err, datalog.ErrNotFound) && r.pos != last && try < 3 {
			last = r.pos
			continue
		}
		return m, b, r.pos, err
	}
}
