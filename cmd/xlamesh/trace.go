package main

import (
	"fmt"
	"os"

	"github.com/xlamesh/xlamesh/pjrt"
)

// benchTrace is bench's -trace: the plugin's profiler running around the figures, and the file
// its trace goes to. The zero value (no -trace) does nothing.
type benchTrace struct {
	path string
	pr   *pjrt.Profiler
}

// startTrace starts the profiler of c's plugin when path is set. A plugin without the profiler
// extension (the CPU plugins) is an error wrapping pjrt.ErrNoProfiler, before anything is timed.
func startTrace(c *pjrt.Client, path string) (*benchTrace, error) {
	if path == "" {
		return &benchTrace{}, nil
	}
	pr, err := c.Plugin().StartProfiler()
	if err != nil {
		return nil, fmt.Errorf("-trace %s: %w", path, err)
	}
	return &benchTrace{path: path, pr: pr}, nil
}

// write stops the profiler and writes its trace.
func (t *benchTrace) write(p *progress) error {
	if t.pr == nil {
		return nil
	}
	xspace, err := t.pr.Stop()
	if err != nil {
		return fmt.Errorf("-trace %s: %w", t.path, err)
	}
	f, err := os.Create(t.path)
	if err != nil {
		return fmt.Errorf("-trace: %w", err)
	}
	if err := pjrt.WriteChromeTrace(f, xspace); err != nil {
		f.Close()
		return fmt.Errorf("-trace %s: %w", t.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-trace: %w", err)
	}
	p.printf("xlamesh bench: wrote the trace %s (%d bytes of XSpace)\n", t.path, len(xspace))
	return nil
}

// close releases the profiler.
func (t *benchTrace) close() {
	if t.pr != nil {
		_ = t.pr.Close()
	}
}
