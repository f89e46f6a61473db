package regfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/regfile"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(path, []byte("hello"), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(path, link))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	for _, tc := range []struct {
		name, path string
		max        int64
		want       string
		err        error
		msg        string
	}{
		{"a regular file", path, 5, "hello", nil, ""},
		{"any size", path, -1, "hello", nil, ""},
		{"through a symlink", link, 100, "hello", nil, ""},
		{"empty", empty, 0, "", nil, ""},
		{"over the cap", path, 4, "", regfile.ErrTooLarge, path + ": file too large: 5 bytes, the limit is 4"},
		{"a FIFO without a writer", fifo, 100, "", regfile.ErrNotRegular, fifo + ": not a regular file (a named pipe)"},
		{"/dev/zero", "/dev/zero", 100, "", regfile.ErrNotRegular, "/dev/zero: not a regular file (a character device)"},
		{"a directory", dir, 100, "", regfile.ErrNotRegular, dir + ": not a regular file (a directory)"},
		{"missing", filepath.Join(dir, "missing"), 100, "", fs.ErrNotExist, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var got []byte
			var err error
			go func() { got, err = regfile.ReadFile(tc.path, tc.max); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadFile(%s) still blocked after 10s", tc.path)
			}
			if tc.err == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.want, string(got))
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.err), "%v", err)
			if tc.msg != "" {
				assert.Equal(t, tc.msg, err.Error())
			}
			assert.Nil(t, got)
		})
	}
}

func TestOpenReturnsSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 1234), 0o644))
	f, size, err := regfile.Open(path, 1234)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, int64(1234), size)
	buf := make([]byte, 2000)
	n, err := f.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 1234, n)
}
