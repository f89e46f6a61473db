package checkpoint

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/gomlx/gopjrt/dtypes"
)

// ArrayInfo describes one array of a checkpoint, as `xlamesh ckpt ls` prints it.
type ArrayInfo struct {
	Name   string       // "" for a checkpoint that is one array
	Format Format       // ZarrV2 or Zarr3
	DType  dtypes.DType // element type
	Shape  []int        // global shape
	Chunks []int        // chunk shape: the shard shape at save time
	Files  int          // chunk files present (zarr3 leaves out chunks of zeros)
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
		if !exists(filepath.Join(path, zarr2Meta)) && !exists(filepath.Join(path, zarr3Meta)) {
			return nil // a directory of arrays, not an array
		}
		l, err := readMeta(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info := ArrayInfo{Name: filepath.ToSlash(rel), Format: l.format, DType: l.dtype, Shape: l.shape, Chunks: l.chunks}
		if info.Name == "." {
			info.Name = ""
		}
		entries, err := readDirSizes(path)
		if err != nil {
			return err
		}
		for name, size := range entries {
			info.Bytes += size
			if name != zarr2Meta && name != zarr3Meta {
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
