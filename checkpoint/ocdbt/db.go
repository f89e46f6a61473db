package ocdbt

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ManifestName is the file at the root of every OCDBT database.
const ManifestName = "manifest.ocdbt"

// DB is an OCDBT database opened for reading: the latest version at the time of Open. Its
// methods may be called from several goroutines. Close it to release its open files.
type DB struct {
	dir      string
	conf     config
	manifest *manifest // the manifest holding the version tree
	mname    string    // its file name
	latest   version   // the version Get and List read; root missing when there is none

	mu         sync.Mutex
	closed     bool
	files      map[string]*openFile
	cache      map[ref]*btreeNode // decoded nodes, dropped when they exceed cacheLimit
	cacheBytes int
}

// cacheLimit bounds the decoded bytes of the B+tree nodes a DB keeps.
const cacheLimit = 64 << 20

type openFile struct {
	f    *os.File
	size int64
}

// Version describes one version (generation) of a database.
type Version struct {
	// Generation numbers the versions from 1 on.
	Generation uint64
	// CommitTime is when the version was written.
	CommitTime time.Time
	// NumKeys is the number of keys in the version.
	NumKeys uint64
}

// Open opens the OCDBT database in directory dir and reads its manifest. It returns an error
// wrapping ErrMissingFile when dir has no manifest.ocdbt, and one of the package's other
// errors when the manifest is malformed. Nodes and values are read later, by Get and List.
func Open(dir string) (*DB, error) {
	raw, err := readWhole(dir, ManifestName)
	if err != nil {
		return nil, err
	}
	m, err := decodeManifest(raw, ManifestName)
	if err != nil {
		return nil, err
	}
	db := &DB{dir: dir, conf: m.config, manifest: m, mname: ManifestName, files: map[string]*openFile{}}
	db.latest.root = ref{offset: ^uint64(0), length: ^uint64(0)}
	if m.manifestKind == 1 {
		if err := db.openNumbered(); err != nil {
			return nil, err
		}
	}
	if vs := db.manifest.versions; len(vs) > 0 {
		db.latest = vs[len(vs)-1]
	}
	return db, nil
}

func readWhole(dir, name string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ocdbt: %s: %w: %w", name, ErrMissingFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("ocdbt: %s: %w", name, err)
	}
	return raw, nil
}

// openNumbered reads the newest manifest.<16 hex digits> of a database of the numbered
// manifest kind; without one, the database has no version yet.
func (db *DB) openNumbered() error {
	ents, err := os.ReadDir(db.dir)
	if err != nil {
		return fmt.Errorf("ocdbt: %s: %w", db.dir, err)
	}
	var best uint64
	name := ""
	for _, e := range ents {
		hex, ok := strings.CutPrefix(e.Name(), "manifest.")
		if !ok || len(hex) != 16 || strings.ToLower(hex) != hex {
			continue
		}
		g, err := strconv.ParseUint(hex, 16, 64)
		if err != nil || g < best || (g == best && name != "") {
			continue
		}
		best, name = g, e.Name()
	}
	if name == "" {
		db.manifest = &manifest{config: db.conf}
		return nil
	}
	raw, err := readWhole(db.dir, name)
	if err != nil {
		return err
	}
	m, err := decodeManifest(raw, name)
	if err != nil {
		return err
	}
	switch {
	case m.manifestKind != 0:
		return fmt.Errorf("ocdbt: %s: %w: a numbered manifest of manifest_kind %d, want 0", name, ErrFormat, m.manifestKind)
	case m.uuid != db.conf.uuid:
		return fmt.Errorf("ocdbt: %s: %w: database uuid %x, but %s has %x", name, ErrFormat, m.uuid, ManifestName, db.conf.uuid)
	case m.versions[len(m.versions)-1].generation != best:
		return fmt.Errorf("ocdbt: %s: %w: latest generation %d does not match the file name", name, ErrFormat, m.versions[len(m.versions)-1].generation)
	}
	db.manifest, db.mname = m, name
	return nil
}

// Close closes the files the DB holds open. Later calls of its methods return ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	var errs []error
	for _, f := range db.files {
		errs = append(errs, f.f.Close())
	}
	db.files, db.closed, db.cache = nil, true, nil
	return errors.Join(errs...)
}

// Version returns the version that Get and List read: the latest one. A database without
// versions has generation 0.
func (db *DB) Version() Version {
	if len(db.manifest.versions) == 0 {
		return Version{}
	}
	return publicVersion(db.latest)
}

func publicVersion(v version) Version {
	return Version{Generation: v.generation, CommitTime: time.Unix(0, int64(v.commitTime)).UTC(), NumKeys: v.stats.numKeys}
}

// Versions returns every version the database's version tree holds, oldest first. It reads
// the version tree nodes that the manifest refers to.
func (db *DB) Versions() ([]Version, error) {
	var all []version
	seen := map[ref]bool{}
	var walk func(r versionNodeRef, from string) error
	walk = func(r versionNodeRef, from string) error {
		if seen[r.loc] {
			return fmt.Errorf("ocdbt: version node %v (referenced by %s): %w: reached twice", r.loc, from, ErrDepth)
		}
		seen[r.loc] = true
		raw, err := db.read(r.loc, from)
		if err != nil {
			return err
		}
		name := "version node " + r.loc.String()
		n, err := decodeVersionNode(raw, name, r.loc.file.base)
		if err != nil {
			return err
		}
		switch {
		case n.arityLog2 != db.conf.arityLog2:
			return fmt.Errorf("ocdbt: %s: %w: version_tree_arity_log2 %d, the manifest has %d", name, ErrFormat, n.arityLog2, db.conf.arityLog2)
		case n.height != r.height:
			return fmt.Errorf("ocdbt: %s: %w: height %d, its parent expects %d", name, ErrDepth, n.height, r.height)
		}
		last := uint64(0)
		if n.height == 0 {
			last = n.versions[len(n.versions)-1].generation
		} else {
			last = n.children[len(n.children)-1].generation
		}
		if last != r.generation {
			return fmt.Errorf("ocdbt: %s: %w: latest generation %d, its parent expects %d", name, ErrFormat, last, r.generation)
		}
		all = append(all, n.versions...)
		for _, c := range n.children {
			if err := walk(c, name); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range db.manifest.nodes {
		if err := walk(r, db.mname); err != nil {
			return nil, err
		}
	}
	all = append(all, db.manifest.versions...)
	out := make([]Version, len(all))
	for i, v := range all {
		if i > 0 && v.generation <= all[i-1].generation {
			return nil, fmt.Errorf("ocdbt: %s: %w: version tree lists generation %d after %d", db.mname, ErrFormat, v.generation, all[i-1].generation)
		}
		out[i] = publicVersion(v)
	}
	return out, nil
}

// checkPath checks that a data file path stays inside the database directory.
func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return fmt.Errorf("%w: data file path %q", ErrFormat, p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: data file path %q", ErrFormat, p)
		}
	}
	return nil
}

// read reads the byte range r of a data file; from names the object that refers to it.
func (db *DB) read(r ref, from string) ([]byte, error) {
	p := r.file.path()
	if err := checkPath(p); err != nil {
		return nil, fmt.Errorf("ocdbt: %s: %w", from, err)
	}
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil, fmt.Errorf("ocdbt: %s: %w", db.dir, ErrClosed)
	}
	of := db.files[p]
	if of == nil {
		f, err := os.Open(filepath.Join(db.dir, filepath.FromSlash(p)))
		if err != nil {
			db.mu.Unlock()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("ocdbt: %s (referenced by %s): %w: %w", p, from, ErrMissingFile, err)
			}
			return nil, fmt.Errorf("ocdbt: %s (referenced by %s): %w", p, from, err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			db.mu.Unlock()
			return nil, fmt.Errorf("ocdbt: %s: %w", p, err)
		}
		of = &openFile{f: f, size: st.Size()}
		db.files[p] = of
	}
	db.mu.Unlock()
	if r.offset > uint64(of.size) || r.length > uint64(of.size)-r.offset {
		return nil, fmt.Errorf("ocdbt: %s (referenced by %s): %w: bytes [%d:%d] of a %d-byte file", p, from, ErrRange, r.offset, r.offset+r.length, of.size)
	}
	buf := make([]byte, r.length)
	if _, err := of.f.ReadAt(buf, int64(r.offset)); err != nil {
		return nil, fmt.Errorf("ocdbt: %s: %w", p, err)
	}
	return buf, nil
}

// node reads and checks the B+tree node at r, which its parent (from) says has the given
// height and no key below minKey.
func (db *DB) node(r ref, height uint8, minKey, from string) (*btreeNode, string, error) {
	name := "b+tree node " + r.String()
	db.mu.Lock()
	n := db.cache[r]
	db.mu.Unlock()
	if n == nil {
		raw, err := db.read(r, from)
		if err != nil {
			return nil, "", err
		}
		if n, err = decodeBtreeNode(raw, name, r.file.base); err != nil {
			return nil, "", err
		}
		db.mu.Lock()
		if db.cacheBytes+n.size > cacheLimit {
			db.cache, db.cacheBytes = nil, 0
		}
		if db.cache == nil {
			db.cache = map[ref]*btreeNode{}
		}
		db.cache[r] = n
		db.cacheBytes += n.size
		db.mu.Unlock()
	}
	if n.height != height {
		return nil, "", fmt.Errorf("ocdbt: %s: %w: height %d, its parent (%s) expects %d", name, ErrDepth, n.height, from, height)
	}
	if n.keys[0] < minKey {
		return nil, "", fmt.Errorf("ocdbt: %s: %w: first key %q below the bound %q its parent sets", name, ErrFormat, n.keys[0], minKey)
	}
	return n, name, nil
}

// Get returns the value of key in the latest version. It returns an error wrapping
// ErrNotFound when the key is not there, and one of the package's other errors when a node
// or data file on the way is missing or malformed.
func (db *DB) Get(key string) ([]byte, error) {
	if db.latest.root.missing() {
		return nil, fmt.Errorf("ocdbt: %w: %q", ErrNotFound, key)
	}
	r, height, rel, minKey, from := db.latest.root, db.latest.rootHeight, key, "", db.mname
	for {
		n, name, err := db.node(r, height, minKey, from)
		if err != nil {
			return nil, err
		}
		if n.height == 0 {
			i, ok := slices.BinarySearch(n.keys, rel)
			if !ok {
				return nil, fmt.Errorf("ocdbt: %w: %q", ErrNotFound, key)
			}
			return db.value(n.values[i], name)
		}
		// The child to descend into is the last whose key is at most rel.
		i, found := slices.BinarySearch(n.keys, rel)
		if !found {
			i--
		}
		if i < 0 {
			return nil, fmt.Errorf("ocdbt: %w: %q", ErrNotFound, key)
		}
		c := n.children[i]
		sp := n.keys[i][:c.subtreePrefix]
		if !strings.HasPrefix(rel, sp) {
			return nil, fmt.Errorf("ocdbt: %w: %q", ErrNotFound, key)
		}
		r, height, rel, minKey, from = c.loc, height-1, rel[len(sp):], n.keys[i][c.subtreePrefix:], name
	}
}

func (db *DB) value(v leafValue, from string) ([]byte, error) {
	if !v.indirect {
		return bytes.Clone(v.inline), nil
	}
	return db.read(v.loc, from)
}

// List returns the keys of the latest version that start with prefix, in increasing byte
// order ("" lists every key). It reads the nodes whose key ranges meet the prefix, and
// returns an error wrapping ErrDepth for a tree that reaches a node twice.
func (db *DB) List(prefix string) ([]string, error) {
	if db.latest.root.missing() {
		return nil, nil
	}
	l := &lister{db: db, prefix: prefix, seen: map[ref]bool{}}
	l.end, l.hasEnd = prefixEnd(prefix)
	err := l.visit(db.latest.root, db.latest.rootHeight, "", "", "", false, db.mname)
	if err != nil {
		return nil, err
	}
	return l.keys, nil
}

// prefixEnd returns the least string above every string that starts with prefix; there is
// none when prefix is empty or all 0xff bytes.
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "", false
	}
	b[len(b)-1]++
	return string(b), true
}

type lister struct {
	db          *DB
	prefix, end string
	hasEnd      bool
	seen        map[ref]bool
	keys        []string
	last        string
	any         bool
}

// visit lists the node at r: its keys are relative to p (a full-key prefix), none is below
// minKey (relative) and, when hasHi, all are below hi (a full key).
func (l *lister) visit(r ref, height uint8, p, minKey, hi string, hasHi bool, from string) error {
	if l.seen[r] {
		return fmt.Errorf("ocdbt: b+tree node %v (referenced by %s): %w: reached twice", r, from, ErrDepth)
	}
	l.seen[r] = true
	n, name, err := l.db.node(r, height, minKey, from)
	if err != nil {
		return err
	}
	for i, k := range n.keys {
		full := p + k
		if hasHi && full >= hi {
			return fmt.Errorf("ocdbt: %s: %w: key %q not below the bound %q its parent sets", name, ErrFormat, full, hi)
		}
		if l.any && full <= l.last {
			return fmt.Errorf("ocdbt: %s: %w: key %q not above the previous key %q", name, ErrFormat, full, l.last)
		}
		if n.height == 0 {
			l.last, l.any = full, true
			if strings.HasPrefix(full, l.prefix) {
				l.keys = append(l.keys, full)
			}
			continue
		}
		childHi, childHasHi := hi, hasHi
		if i+1 < len(n.keys) {
			childHi, childHasHi = p+n.keys[i+1], true
		}
		if l.hasEnd && full >= l.end {
			break // this child and those after it hold keys above the prefix
		}
		if childHasHi && childHi <= l.prefix {
			continue // keys below the prefix
		}
		c := n.children[i]
		sp := p + k[:c.subtreePrefix]
		if !strings.HasPrefix(sp, l.prefix) && !strings.HasPrefix(l.prefix, sp) {
			continue
		}
		if err := l.visit(c.loc, height-1, sp, k[c.subtreePrefix:], childHi, childHasHi, name); err != nil {
			return err
		}
	}
	return nil
}
