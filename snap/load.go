package snap

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/corral-db/corral/vfs"
)

// Load reads the newest intact snapshot in dir: it calls fn with the
// snapshot's zxid and its body, newest first, until one succeeds, and
// returns that zxid. fn must start from an empty state on every call, since
// a failed attempt may have fed it part of a body.
//
// A snapshot is set aside (renamed to <name>.corrupt, with a log line) and
// the next older one tried when it is damaged: a bad header, a truncated
// file, a body whose CRC or length does not match, or fn returning an
// error that wraps ErrCorrupt (a body fn cannot decode). After fn returns,
// Load reads whatever fn left of the body, so the CRC is always checked
// and fn's errors are also judged by it: if fn fails and the body is
// damaged, the snapshot is set aside whatever fn's error. An error from fn
// on an intact body that does not wrap ErrCorrupt (say, a cancelled
// context) is returned as is and nothing is renamed: a snapshot is never
// set aside for a reason that is not in its bytes. I/O errors are returned
// too. If no snapshot is left, Load returns ErrNoSnapshot.
func Load(fsys vfs.FS, dir string, logger *slog.Logger, fn func(zxid int64, r io.Reader) error) (int64, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	infos, err := Newest(fsys, dir)
	if err != nil {
		return 0, err
	}
	for _, info := range infos {
		corrupt, err := tryLoad(fsys, dir, info, fn)
		if corrupt == nil && err == nil {
			return info.Zxid, nil
		}
		if corrupt == nil {
			return 0, err
		}
		if err := setAside(fsys, dir, info, corrupt, logger); err != nil {
			return 0, err
		}
	}
	return 0, ErrNoSnapshot
}

// tryLoad returns (reason, nil) if the snapshot is damaged, (nil, err) for
// any other failure.
func tryLoad(fsys vfs.FS, dir string, info Info, fn func(int64, io.Reader) error) (corrupt, err error) {
	r, err := Open(fsys, dir, info)
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return err, nil
		}
		return nil, err
	}
	defer r.Close()
	ferr := fn(info.Zxid, r)
	_, derr := io.Copy(io.Discard, r)
	switch {
	case errors.Is(derr, ErrCorrupt):
		return derr, nil
	case derr != nil:
		return nil, derr
	case ferr == nil:
		return nil, nil
	case errors.Is(ferr, ErrCorrupt):
		return ferr, nil
	}
	return nil, fmt.Errorf("snap: loading %s: %w", info.Name, ferr)
}

func setAside(fsys vfs.FS, dir string, info Info, reason error, logger *slog.Logger) error {
	from := filepath.Join(dir, info.Name)
	to := from + corruptSuffix
	logger.Warn("snap: setting aside corrupt snapshot, trying an older one",
		"file", info.Name, "zxid", fmt.Sprintf("%#x", info.Zxid), "reason", reason.Error(), "renamed_to", info.Name+corruptSuffix)
	if err := fsys.Rename(from, to); err != nil {
		return fmt.Errorf("snap: setting aside %s: %w", info.Name, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("snap: %w", err)
	}
	return nil
}
