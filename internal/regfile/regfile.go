// Package regfile opens and reads files that must be regular files of bounded size, for paths a
// user hands to xlamesh (a plugin, a StableHLO file, a go.mod, an installer stamp).
//
// A path naming a FIFO, a character device such as /dev/zero, a socket or a directory is
// refused before a byte is read, and so is a file over the caller's size cap: a caller never
// blocks forever on a pipe nobody writes, nor reads or allocates without bound. The open itself
// does not block either: it uses O_NONBLOCK, so opening a FIFO without a writer returns at once,
// and the check is fstat of the opened file, not a stat of the path that a rename could change.
//
// Errors name the path and wrap ErrNotRegular or ErrTooLarge (or the os error, matching
// fs.ErrNotExist and the like); callers add their own package prefix.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Errors, wrapped with the path.
var (
	// ErrNotRegular: the path names something other than a regular file (after symlinks).
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the caller's cap.
	ErrTooLarge = errors.New("file too large")
)

// Open opens path for reading and checks, on the opened file, that it is a regular file of at
// most max bytes (max < 0: any size). It returns the file, which the caller closes, and its size.
func Open(path string, max int64) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(st.Mode()))
	}
	if max >= 0 && st.Size() > max {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w: %d bytes, the limit is %d", path, ErrTooLarge, st.Size(), max)
	}
	return f, st.Size(), nil
}

// ReadFile reads the whole of the regular file at path, of at most max bytes (max < 0: any
// size); a file that grows past max while it is read is refused too.
func ReadFile(path string, max int64) ([]byte, error) {
	f, size, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := io.Reader(f)
	if max >= 0 {
		r = io.LimitReader(f, max+1)
	}
	data := make([]byte, 0, size+1)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if max >= 0 && int64(len(data)) > max {
			return nil, fmt.Errorf("%s: %w: it grew past %d bytes while read", path, ErrTooLarge, max)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// kind names a file mode's type for messages.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.Type().String()
}
