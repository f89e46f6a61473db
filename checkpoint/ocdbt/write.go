package ocdbt

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Option configures Write.
type Option func(*writeOptions)

type writeOptions struct {
	rand       io.Reader
	commitTime time.Time
	conf       config
}

// WithRandom sets the source of the random bytes Write draws: the database's 16-byte uuid,
// then the 16 bytes that name the data file (crypto/rand by default). With a fixed source
// and commit time, Write writes the same bytes every time.
func WithRandom(r io.Reader) Option { return func(o *writeOptions) { o.rand = r } }

// WithCommitTime sets the version's commit time (the current time by default). It must not
// be before the Unix epoch.
func WithCommitTime(t time.Time) Option { return func(o *writeOptions) { o.commitTime = t } }

// WithMaxInlineValueBytes sets the largest value stored inline in a B+tree leaf; larger
// values go to the data file. tensorstore's default, and Write's, is 100; Orbax uses 1024.
// At most 1 MiB.
func WithMaxInlineValueBytes(n int) Option {
	return func(o *writeOptions) { o.conf.maxInlineValueBytes = uint32(min(max(n, 0), maxInlineValueLength+1)) }
}

// WithMaxDecodedNodeBytes sets the size B+tree nodes are split to stay under (a node always
// holds at least one entry). tensorstore's default, and Write's, is 8 MiB.
func WithMaxDecodedNodeBytes(n int) Option {
	return func(o *writeOptions) { o.conf.maxDecodedNodeBytes = uint32(min(max(n, 1), 1<<32-1)) }
}

// WithCompression sets the zstd level of the manifest and nodes (0, the default, is zstd's
// default level, as in tensorstore's default config {"id": "zstd", "level": 0}).
func WithCompression(level int) Option {
	return func(o *writeOptions) { o.conf.compress, o.conf.level = true, int32(level) }
}

// WithoutCompression stores the manifest and nodes uncompressed ("compression": null).
func WithoutCompression() Option {
	return func(o *writeOptions) { o.conf.compress, o.conf.level = false, 0 }
}

// Write creates an OCDBT database in dir holding entries as its one version (generation 1),
// which tensorstore reads back. dir must not exist or be empty (else the error wraps
// ErrExists). Values longer than the inline limit are stored in one data file,
// d/<32 hex digits>, followed by the B+tree nodes; manifest.ocdbt is written last, under a
// temporary name renamed into place, so a Write that fails leaves no manifest. Keys are at
// most 65535 bytes.
func Write(dir string, entries map[string][]byte, opts ...Option) error {
	o := writeOptions{rand: rand.Reader, conf: config{
		maxInlineValueBytes: 100, maxDecodedNodeBytes: 8 << 20, arityLog2: 4, compress: true,
	}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.commitTime.IsZero() {
		o.commitTime = time.Now()
	}
	switch {
	case o.conf.maxInlineValueBytes > maxInlineValueLength:
		return fmt.Errorf("ocdbt: write %s: max inline value bytes above %d", dir, maxInlineValueLength)
	case o.commitTime.Before(time.Unix(0, 0)) || o.commitTime.After(time.Unix(0, 1<<63-1)):
		return fmt.Errorf("ocdbt: write %s: commit time %v outside what 64-bit nanoseconds since 1970 hold", dir, o.commitTime)
	case o.conf.level < -(1<<17) || o.conf.level > 22:
		return fmt.Errorf("ocdbt: write %s: zstd level %d outside [%d, 22]", dir, o.conf.level, -(1 << 17))
	}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		if len(k) > maxKeyLength {
			return fmt.Errorf("ocdbt: write %s: key of %d bytes (at most %d) starting %.40q", dir, len(k), maxKeyLength, k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if err := makeEmptyDir(dir); err != nil {
		return err
	}
	var random [32]byte
	if _, err := io.ReadFull(o.rand, random[:]); err != nil {
		return fmt.Errorf("ocdbt: write %s: random bytes: %w", dir, err)
	}
	copy(o.conf.uuid[:], random[:16])
	w := &treeWriter{conf: &o.conf, file: dataFile{rel: "d/" + hex.EncodeToString(random[16:])}}
	v := version{generation: 1, commitTime: uint64(o.commitTime.UnixNano())}
	v.root = ref{file: dataFile{}, offset: ^uint64(0), length: ^uint64(0)}
	if len(keys) > 0 {
		root, err := w.build(keys, entries)
		if err != nil {
			return fmt.Errorf("ocdbt: write %s: %w", dir, err)
		}
		v.rootHeight, v.root, v.stats = root.height, root.loc, root.stats
		if err := writeSynced(dir, w.file.path(), w.data); err != nil {
			return err
		}
	}
	m := &manifest{config: o.conf, versions: []version{v}}
	raw, err := encodeManifest(m)
	if err != nil {
		return fmt.Errorf("ocdbt: write %s: %w", dir, err)
	}
	tmp := ManifestName + ".tmp"
	if err := writeSynced(dir, tmp, raw); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, tmp), filepath.Join(dir, ManifestName)); err != nil {
		return fmt.Errorf("ocdbt: write %s: %w", dir, err)
	}
	return nil
}

func makeEmptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("ocdbt: write %s: %w", dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("ocdbt: write %s: %w", dir, err)
	case len(ents) > 0:
		return fmt.Errorf("ocdbt: write %s: %w: directory holds %d entries (%s, ...)", dir, ErrExists, len(ents), ents[0].Name())
	}
	return nil
}

func writeSynced(dir, rel string, data []byte) error {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("ocdbt: write %s: %w", dir, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("ocdbt: write %s: %w", dir, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ocdbt: write %s: %w", dir, err)
	}
	return nil
}

// treeWriter builds a B+tree into one data file: the out-of-line values first, then the
// nodes, each after its children.
type treeWriter struct {
	conf *config
	file dataFile
	data []byte
}

// wnode is a node of the tree being written: the range of keys below it and, once
// written, where it is.
type wnode struct {
	height      uint8
	first, last string // the least and greatest full key below the node
	lo, hi      int    // its keys (leaf)
	children    []*wnode
	loc         ref
	stats       stats
}

// Per-entry overheads for the size estimates that split nodes: varints, value kind,
// references and statistics, generously.
const (
	leafEntryOverhead     = 24
	interiorEntryOverhead = 64
	nodeOverhead          = 64
)

func (w *treeWriter) build(keys []string, entries map[string][]byte) (*wnode, error) {
	values := make([]leafValue, len(keys))
	for i, k := range keys {
		v := entries[k]
		if len(v) <= int(w.conf.maxInlineValueBytes) {
			values[i] = leafValue{inline: v}
			continue
		}
		values[i] = leafValue{indirect: true, loc: ref{file: w.file, offset: uint64(len(w.data)), length: uint64(len(v))}}
		w.data = append(w.data, v...)
	}
	limit := int(w.conf.maxDecodedNodeBytes)
	// Leaves: as many keys as fit the size limit.
	var level []*wnode
	var cur *wnode
	size := 0
	for i, k := range keys {
		es := len(k) + leafEntryOverhead
		if !values[i].indirect {
			es += len(values[i].inline)
		}
		if cur == nil || (size+es > limit && i > cur.lo) {
			if cur != nil {
				cur.hi, cur.last = i, keys[i-1]
			}
			cur = &wnode{lo: i, first: k}
			level = append(level, cur)
			size = nodeOverhead
		}
		size += es
	}
	cur.hi, cur.last = len(keys), keys[len(keys)-1]
	// Interior levels until one node is left.
	for height := uint8(1); len(level) > 1; height++ {
		if height == 0 {
			return nil, errors.New("b+tree taller than 255 levels")
		}
		var up []*wnode
		size := nodeOverhead
		for _, c := range level {
			es := len(c.first) + interiorEntryOverhead
			if n := len(up); n == 0 || (size+es > limit && len(up[n-1].children) >= 2) {
				up = append(up, &wnode{height: height, first: c.first})
				size = nodeOverhead
			}
			p := up[len(up)-1]
			p.children, p.last = append(p.children, c), c.last
			size += es
		}
		level = up
	}
	root := level[0]
	if err := w.write(root, 0, keys, values); err != nil {
		return nil, err
	}
	return root, nil
}

// write encodes n, its keys relative to the first prefixLen bytes that all its keys share
// (and that its parent's entry implies), after its children.
func (w *treeWriter) write(n *wnode, prefixLen int, keys []string, values []leafValue) error {
	bn := &btreeNode{height: n.height}
	if n.height == 0 {
		for i := n.lo; i < n.hi; i++ {
			bn.keys = append(bn.keys, keys[i][prefixLen:])
			bn.values = append(bn.values, values[i])
			n.stats.numKeys++
			if values[i].indirect {
				n.stats.numIndirectValueBytes += values[i].loc.length
			}
		}
	} else {
		for _, c := range n.children {
			cp := commonPrefix(c.first, c.last)
			if err := w.write(c, cp, keys, values); err != nil {
				return err
			}
			bn.keys = append(bn.keys, c.first[prefixLen:])
			bn.children = append(bn.children, child{subtreePrefix: cp - prefixLen, loc: c.loc, stats: c.stats})
			n.stats.numKeys += c.stats.numKeys
			n.stats.numTreeBytes += c.stats.numTreeBytes
			n.stats.numIndirectValueBytes += c.stats.numIndirectValueBytes
		}
	}
	raw, err := encodeBtreeNode(bn, w.conf)
	if err != nil {
		return err
	}
	n.loc = ref{file: w.file, offset: uint64(len(w.data)), length: uint64(len(raw))}
	n.stats.numTreeBytes += uint64(len(raw))
	w.data = append(w.data, raw...)
	return nil
}
