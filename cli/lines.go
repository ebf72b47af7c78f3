package cli

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"golang.org/x/term"
)

// maxLine bounds one input line (a set of 1 MiB of data fits).
const maxLine = 4 << 20

// lineReader is where the shell gets its lines.
type lineReader interface {
	// ReadLine returns the next line without its end, io.EOF at the end
	// of input.
	ReadLine(prompt string) (string, error)
	// Output is where other output must go while ReadLine waits, or nil
	// for stdout as is.
	Output() io.Writer
}

// plainReader reads lines from a pipe or file: no prompt, no editing.
type plainReader struct{ sc *bufio.Scanner }

func newPlainReader(r io.Reader) *plainReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &plainReader{sc}
}

func (p *plainReader) ReadLine(string) (string, error) {
	if p.sc.Scan() {
		return p.sc.Text(), nil
	}
	if err := p.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

func (p *plainReader) Output() io.Writer { return nil }

// termReader edits lines on a terminal with x/term's Terminal: cursor
// keys, history, Ctrl-A/E/K/U/W, Tab completion of command names. The
// terminal is raw only while a line is read, so that Ctrl-C during a
// command is a signal that interrupts it.
type termReader struct {
	t  *term.Terminal
	fd int
}

func newTermReader(in io.Reader, out io.Writer, fd int) *termReader {
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "")
	t.AutoCompleteCallback = completeCommand
	return &termReader{t: t, fd: fd}
}

func (r *termReader) ReadLine(prompt string) (string, error) {
	if r.fd >= 0 {
		if state, err := term.MakeRaw(r.fd); err == nil {
			defer term.Restore(r.fd, state)
		}
		if w, h, err := term.GetSize(r.fd); err == nil && w > 0 && h > 0 {
			r.t.SetSize(w, h)
		}
	}
	r.t.SetPrompt(prompt)
	line, err := r.t.ReadLine()
	if errors.Is(err, term.ErrPasteIndicator) {
		err = nil // a pasted line is a line
	}
	return line, err
}

// Output is the Terminal itself, which clears the prompt, writes and
// redraws the line being edited.
func (r *termReader) Output() io.Writer { return r.t }

// completeCommand completes the command name under the cursor on Tab:
// fully if one name matches, else as far as the matches agree.
func completeCommand(line string, pos int, key rune) (string, int, bool) {
	if key != '\t' || strings.ContainsAny(line[:pos], " \t") {
		return "", 0, false
	}
	prefix := line[:pos]
	var match []string
	for _, name := range commandNames() {
		if strings.HasPrefix(name, prefix) {
			match = append(match, name)
		}
	}
	if len(match) == 0 {
		return "", 0, false
	}
	common := match[0]
	for _, m := range match[1:] {
		for !strings.HasPrefix(m, common) {
			common = common[:len(common)-1]
		}
	}
	if len(match) == 1 && (pos == len(line) || line[pos] != ' ') {
		common += " "
	}
	return common + line[pos:], len(common), true
}
