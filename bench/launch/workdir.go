package launch

import (
	"log/slog"
	"os"
)

// WorkDir makes a run's temporary directory under parent (the system's
// when empty) and returns what removes it at the end of the run, or keeps
// it, logged, when keep is set.
func WorkDir(parent, prefix string, keep bool, log *slog.Logger) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", nil, err
	}
	if keep {
		log.Info("keeping work directory", "dir", dir)
		return dir, func() {}, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
