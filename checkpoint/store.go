package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/xlamesh/xlamesh/checkpoint/ocdbt"
)

// store is where a checkpoint's files are: a directory, or the OCDBT database at the root of
// the directory (Orbax's layout), whose keys are the files' slash-separated paths.
type store interface {
	// read returns the bytes of key, read into into's memory when its capacity is enough (a
	// file; into may be nil); a missing key is an error wrapping fs.ErrNotExist, one longer
	// than limit bytes an error wrapping ErrCorrupt (before it is read, from a file).
	read(key string, limit int, into []byte) ([]byte, error)
	// list returns every key with the size of its value (-1 where only reading it would tell),
	// sorted.
	list() ([]sized, error)
	// where names key in errors: a file's path, or the database and the key.
	where(key string) string
	close() error
}

// maxMeta bounds a metadata file: zarr's are a few hundred bytes.
const maxMeta = 1 << 20

// sized is a key of a store and the size of its value.
type sized struct {
	key  string
	size int64
}

// openStore opens the checkpoint in dir: an OCDBT database when dir has a manifest.ocdbt,
// else the files under dir.
func openStore(dir string) (store, error) {
	if _, err := os.Lstat(filepath.Join(dir, ocdbt.ManifestName)); err == nil {
		db, err := ocdbt.Open(dir)
		if err != nil {
			return nil, err
		}
		return &ocdbtStore{dir: dir, db: db}, nil
	}
	return dirStore(dir), nil
}

// dirStore is a checkpoint of plain files below a directory.
type dirStore string

func (d dirStore) path(key string) string { return filepath.Join(string(d), filepath.FromSlash(key)) }

func (d dirStore) read(key string, limit int, into []byte) ([]byte, error) {
	f, err := os.Open(d.path(key))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > int64(limit) {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d it can hold", ErrCorrupt, d.path(key), st.Size(), limit)
	}
	out := into[:0]
	if n := int(st.Size()); cap(out) >= n {
		out = out[:n]
	} else {
		out = make([]byte, n)
	}
	if _, err := io.ReadFull(f, out); err != nil {
		return nil, fmt.Errorf("%s: %w", d.path(key), err)
	}
	return out, nil
}

func (d dirStore) where(key string) string { return d.path(key) }

func (d dirStore) close() error { return nil }

func (d dirStore) list() ([]sized, error) {
	var out []sized
	err := filepath.WalkDir(string(d), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(string(d), p)
		out = append(out, sized{filepath.ToSlash(rel), info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, err
}

// ocdbtStore is a checkpoint kept in an OCDBT database, as Orbax keeps its arrays.
type ocdbtStore struct {
	dir string
	db  *ocdbt.DB
}

func (o *ocdbtStore) read(key string, limit int, _ []byte) ([]byte, error) {
	v, err := o.db.Get(key) // the database checks every length against its files first
	if errors.Is(err, ocdbt.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	if err == nil && len(v) > limit {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d it can hold", ErrCorrupt, o.where(key), len(v), limit)
	}
	return v, err
}

func (o *ocdbtStore) where(key string) string {
	return fmt.Sprintf("key %q of the OCDBT database %s", key, filepath.Join(o.dir, ocdbt.ManifestName))
}

func (o *ocdbtStore) close() error { return o.db.Close() }

func (o *ocdbtStore) list() ([]sized, error) {
	keys, err := o.db.List("")
	out := make([]sized, len(keys))
	for i, k := range keys {
		out[i] = sized{k, -1}
	}
	return out, err
}

// keyIn returns the key of file name in the array named name ("" the checkpoint's root).
func keyIn(name, file string) string {
	if name == "" {
		return file
	}
	return path.Join(name, file)
}
