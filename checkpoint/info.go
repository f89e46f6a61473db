package checkpoint

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// ArrayInfo describes one array of a checkpoint, as `xlamesh ckpt ls` prints it.
type ArrayInfo struct {
	Name   string       // "" for a checkpoint that is one array
	Format Format       // ZarrV2 or Zarr3
	DType  dtypes.DType // element type
	Shape  []int        // global shape
	Chunks []int        // chunk shape: the shard shape at save time
	Files  int          // chunk files (or OCDBT keys) present; zarr3 leaves out chunks of zeros
	Bytes  int64        // bytes on disk, metadata included; -1 in an OCDBT database (Orbax's layout)
	OCDBT  bool         // kept in an OCDBT database
}

// Info lists the arrays of the checkpoint in dir, sorted by name, reading only metadata and
// file sizes. It reads checkpoints of this package, JAX's zarr arrays and Orbax's OCDBT
// layout alike.
func Info(dir string) ([]ArrayInfo, error) {
	if err := checkComplete(dir); err != nil {
		return nil, fmt.Errorf("checkpoint: info %s: %w", dir, err)
	}
	st, err := openStore(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: info %s: %w", dir, err)
	}
	defer st.close()
	keys, err := st.list()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: info %s: %w", dir, err)
	}
	_, inDB := st.(*ocdbtStore)
	// The arrays are the directories (key prefixes) that hold metadata; every other key belongs
	// to the array with the longest name it starts with.
	byName := map[string]*ArrayInfo{}
	var names []string
	for _, k := range keys {
		if base := path.Base(k.key); base == zarr2Meta || base == zarr3Meta {
			name := strings.TrimSuffix(strings.TrimSuffix(k.key, base), "/")
			if byName[name] != nil {
				continue // both metadata files: readMeta reads .zarray
			}
			l, err := readMeta(st, name)
			if err != nil {
				return nil, fmt.Errorf("checkpoint: info %s: %w", dir, err)
			}
			byName[name] = &ArrayInfo{Name: name, Format: l.format, DType: l.dtype, Shape: l.shape, Chunks: l.chunks, OCDBT: inDB}
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, k := range keys {
		for _, name := range names {
			if name != "" && !strings.HasPrefix(k.key, name+"/") {
				continue
			}
			info := byName[name]
			if k.key != keyIn(name, zarr2Meta) && k.key != keyIn(name, zarr3Meta) {
				info.Files++
			}
			if k.size < 0 || info.Bytes < 0 {
				info.Bytes = -1
			} else {
				info.Bytes += k.size
			}
			break
		}
	}
	out := make([]ArrayInfo, 0, len(names))
	for _, name := range names {
		out = append(out, *byName[name])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
