package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/gomlx/gopjrt/dtypes"
)

// ArrayInfo describes one array of a checkpoint, as `xlamesh ckpt ls` prints it.
type ArrayInfo struct {
	Name   string       // "" for a checkpoint that is one array
	DType  dtypes.DType // element type
	Shape  []int        // global shape
	Chunks []int        // chunk shape: the shard shape at save time
	Files  int          // chunk files present
	Bytes  int64        // bytes on disk, metadata included
}

// Info lists the arrays of the checkpoint in dir, sorted by name, reading only metadata and
// file sizes.
func Info(dir string) ([]ArrayInfo, error) {
	if err := checkComplete(dir); err != nil {
		return nil, fmt.Errorf("checkpoint: info %s: %w", dir, err)
	}
	var out []ArrayInfo
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		z, dtype, err := readMeta(path)
		if errors.Is(err, ErrFormat) && !exists(filepath.Join(path, metaName)) {
			return nil // a directory of arrays, not an array
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info := ArrayInfo{Name: filepath.ToSlash(rel), DType: dtype, Shape: z.Shape, Chunks: z.Chunks}
		if info.Name == "." {
			info.Name = ""
		}
		entries, err := readDirSizes(path)
		if err != nil {
			return err
		}
		for name, size := range entries {
			info.Bytes += size
			if name != metaName {
				info.Files++
			}
		}
		out = append(out, info)
		return filepath.SkipDir // chunks only below an array
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: info %s: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
