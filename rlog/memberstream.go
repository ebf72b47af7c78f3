package rlog

import (
	"context"
	"io"
	"path/filepath"
	"time"

	"github.com/corral-db/corral/replica/snapstream"
	"github.com/corral-db/corral/zab"
)

// A logs-only member's SNAP streams its portable image (every log's
// bytes, WriteSnapshot) in pieces ahead of it (replica/snapstream): the
// learner spools them in its directory (snap.spool) and installs from
// the spool, so neither side holds the image in memory and no transport
// frame carries it whole.
const memberStreamPiece = 4 << 20

// streamSnapshots returns the leader's Sender, the learner's side, and
// the function that stops the streams and waits for them.
func streamSnapshots(cfg MemberConfig, s *State) (*snapstream.Sender, *snapstream.Learner, func()) {
	every := cfg.SyncProgressEvery
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	sender := snapstream.NewSender(ctx, snapstream.SenderConfig{ID: cfg.ID, Send: cfg.Send, Backlog: cfg.Backlog,
		Piece: func(to, id, seq uint64, b []byte) zab.Message {
			return snapstream.PieceMessage(cfg.ID, to, id, seq, b)
		},
		Produce:       snapstream.FromWriteSnapshot(s.WriteSnapshot, memberStreamPiece),
		ProgressEvery: every, Logger: cfg.Logger})
	in := &snapstream.Learner{ID: cfg.ID, Send: cfg.Send, FS: cfg.FS, Path: filepath.Join(cfg.Dir, "snap.spool"),
		ProgressEvery: every, Logger: cfg.Logger}
	return sender, in, func() { cancel(); sender.Wait() }
}

// streamedState is a State whose SNAP images may come streamed.
type streamedState struct {
	*State
	in *snapstream.Learner
}

func (s streamedState) InstallSnapshot(ctx context.Context, r io.Reader) (zab.Zxid, error) {
	img, done, err := s.in.Image(r)
	if err != nil {
		return 0, err
	}
	defer done()
	return s.State.InstallSnapshot(ctx, img)
}
