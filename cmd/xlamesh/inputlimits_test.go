package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchMiBBounds checks that -mib outside 1..maxMiB is a usage error naming the flag and
// the range, whatever the figure, before anything is allocated.
func TestBenchMiBBounds(t *testing.T) {
	for _, mib := range []string{"0", "-1", "16385", "1099511627776", "9223372036854775807"} {
		err := bench(io.Discard, io.Discard, []string{"-what", "transfer", "-mib", mib, "-q"})
		var ue *usageErr
		require.ErrorAs(t, err, &ue, mib)
		assert.EqualError(t, err, "bench: -mib must be between 1 and 16384, got "+mib)
	}
}

// TestBenchMiBFitsMemory checks the bound from available memory: with 600 MiB available, the
// transfer figure (6 arrays) takes at most 100 MiB; the other figures do not use -mib.
func TestBenchMiBFitsMemory(t *testing.T) {
	saved := memAvailable
	t.Cleanup(func() { memAvailable = saved })
	memAvailable = func() (int64, bool) { return 600 << 20, true }
	flags := func(what string, mib int) error {
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		require.NoError(t, fs.Parse(nil))
		_, err := benchFlags(fs, "matmul", what, 0, 20, 1000, mib, "table", "", "shardy")
		return err
	}
	assert.EqualError(t, flags("transfer", 256),
		"bench: -mib 256: the transfer figure holds 6 arrays of that size at once and MemAvailable (/proc/meminfo) is 600 MiB: at most -mib 100 fits")
	assert.NoError(t, flags("transfer", 100))
	assert.NoError(t, flags("sweep", 256))
	memAvailable = func() (int64, bool) { return 0, false } // unknown: the fixed cap only
	assert.NoError(t, flags("transfer", 16384))
}

func TestParseMemAvailable(t *testing.T) {
	for in, want := range map[string]int64{
		"MemTotal:       32779808 kB\nMemFree:         1234 kB\nMemAvailable:   23713844 kB\n": 23713844 << 10,
		"MemAvailable: 0 kB\n":                   0,
		"MemTotal:       32779808 kB\n":          -1,
		"MemAvailable:   12 MB\n":                -1,
		"MemAvailable:   -5 kB\n":                -1,
		"MemAvailable:   99999999999999999 kB\n": -1,
		"MemAvailable:\n":                        -1,
	} {
		got, ok := parseMemAvailable([]byte(in))
		if want < 0 {
			assert.False(t, ok, "%q gave %d", in, got)
		} else {
			assert.True(t, ok, in)
			assert.Equal(t, want, got, in)
		}
	}
	got, ok := memAvailable()
	if _, err := os.Stat("/proc/meminfo"); err == nil {
		assert.True(t, ok)
		assert.Positive(t, got)
	}
}

// TestKernelFileNotRegular gives -kernel a FIFO nobody writes, /dev/zero, a directory and a file
// over the cap: each is a usage error at once, none is read.
func TestKernelFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "k.mlir")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	big := filepath.Join(dir, "big.mlir")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxKernelBytes+1)) // sparse: no disk used
	require.NoError(t, f.Close())
	for path, want := range map[string]string{
		fifo:        fifo + ": not a regular file (a named pipe)",
		"/dev/zero": "/dev/zero: not a regular file (a character device)",
		dir:         dir + ": not a regular file (a directory)",
		big:         big + ": file too large: 268435457 bytes, the limit is 268435456",
	} {
		for _, cmd := range []string{"bench", "inspect"} {
			done := make(chan error, 1)
			go func() {
				if cmd == "bench" {
					done <- bench(io.Discard, io.Discard, []string{"-what", "sweep", "-kernel", path, "-q"})
				} else {
					done <- inspect(io.Discard, io.Discard, []string{"-kernel", path, "-q"})
				}
			}()
			select {
			case err := <-done:
				require.Error(t, err, "%s -kernel %s", cmd, path)
				assert.Contains(t, err.Error(), want, cmd)
				if cmd == "bench" {
					var ue *usageErr
					assert.ErrorAs(t, err, &ue, "bench -kernel %s: a usage error", path)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s -kernel %s still running after 20s", cmd, path)
			}
		}
	}
}
