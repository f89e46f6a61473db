package ocdbt

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// dataFile names a data file: base (the transitive path of the object that refers to it
// plus that object's base_path) and relative path. The file is base+rel below the database
// directory; nodes read from it resolve their own data file tables against base.
type dataFile struct{ base, rel string }

func (f dataFile) path() string { return f.base + f.rel }

// ref is a byte range of a data file: an out-of-line value, a B+tree node or a version
// tree node. A version with no keys has a missing root (offset and length all ones).
type ref struct {
	file           dataFile
	offset, length uint64
}

func (r ref) missing() bool { return r.offset == math.MaxUint64 && r.length == math.MaxUint64 }

// stats are the statistics a reference to a B+tree node carries about its subtree.
type stats struct{ numKeys, numTreeBytes, numIndirectValueBytes uint64 }

// config is the database configuration every manifest starts with.
type config struct {
	uuid                [16]byte
	manifestKind        byte // 0 single, 1 numbered
	maxInlineValueBytes uint32
	maxDecodedNodeBytes uint32
	arityLog2           uint8 // version_tree_arity_log2
	compress            bool  // zstd
	level               int32 // zstd level when compress
}

// version is one B+tree root: a leaf entry of the version tree.
type version struct {
	generation uint64
	rootHeight uint8
	root       ref
	stats      stats
	commitTime uint64 // nanoseconds since the Unix epoch
}

// versionNodeRef refers to a version tree node.
type versionNodeRef struct {
	generation     uint64 // latest generation in the subtree
	loc            ref
	numGenerations uint64
	commitTime     uint64 // earliest commit time in the subtree
	height         uint8
}

// manifest is a decoded manifest. A numbered-kind manifest.ocdbt holds only the config.
type manifest struct {
	config
	versions []version
	nodes    []versionNodeRef
}

// versionNode is a decoded version tree node: versions (height 0) or children.
type versionNode struct {
	arityLog2, height uint8
	versions          []version
	children          []versionNodeRef
}

// btreeNode is a decoded B+tree node. keys are the entries' keys relative to the prefix the
// path from the root implies, in increasing order.
type btreeNode struct {
	size     int // decoded bytes, for the DB's cache
	height   uint8
	keys     []string
	values   []leafValue // height 0
	children []child     // height > 0
}

type leafValue struct {
	indirect bool
	inline   []byte
	loc      ref
}

func (v leafValue) size() uint64 {
	if v.indirect {
		return v.loc.length
	}
	return uint64(len(v.inline))
}

type child struct {
	// subtreePrefix is the length of the prefix of the entry's key common to every key
	// in the child's subtree; the child's keys are relative to it.
	subtreePrefix int
	loc           ref
	stats         stats
}

// maxVersionTreeHeight is the format's bound on the height of a version tree node.
func maxVersionTreeHeight(arityLog2 uint8) uint8 { return 63/arityLog2 - 1 }

// ---- data file table ----

func readDataFileTable(d *decoder, transitive string) []dataFile {
	n := d.count("num_files", math.MaxInt32, 2)
	if d.err != nil {
		return nil
	}
	prefix := make([]uint64, n)
	suffix := make([]uint64, n)
	base := make([]uint64, n)
	for i := 1; i < n; i++ {
		prefix[i] = d.uvarintMax("path_prefix_length", maxPathLength)
	}
	for i := range n {
		suffix[i] = d.uvarintMax("path_suffix_length", maxPathLength)
	}
	maxPath := uint64(maxPathLength - len(transitive))
	for i := range n {
		base[i] = d.uvarintMax("base_path_length", maxPathLength)
		if d.err != nil {
			return nil
		}
		pathLen := prefix[i] + suffix[i]
		switch {
		case pathLen > maxPath:
			d.fail(ErrFormat, "data file %d: path length %d exceeds %d", i, pathLen, maxPath)
		case base[i] > pathLen:
			d.fail(ErrFormat, "data file %d: base_path_length %d exceeds path length %d", i, base[i], pathLen)
		case i > 0 && prefix[i] > min(base[i-1], base[i]) && base[i] != base[i-1]:
			d.fail(ErrFormat, "data file %d: common prefix %d extends past a base path that differs from the previous one", i, prefix[i])
		}
	}
	files := make([]dataFile, n)
	prev := ""
	for i := range n {
		if prefix[i] > uint64(len(prev)) {
			d.fail(ErrFormat, "data file %d: path_prefix_length %d exceeds previous path length %d", i, prefix[i], len(prev))
		}
		s := d.bytes(suffix[i], "path_suffix")
		if d.err != nil {
			return nil
		}
		path := prev[:prefix[i]] + string(s)
		files[i] = dataFile{base: transitive + path[:base[i]], rel: path[base[i]:]}
		prev = path
	}
	return files
}

// dataFileTable collects the data files an object refers to and encodes them.
type dataFileTable struct {
	files []dataFile
	index map[dataFile]int
}

func newDataFileTable(files ...dataFile) *dataFileTable {
	t := &dataFileTable{index: map[dataFile]int{}}
	for _, f := range files {
		if _, ok := t.index[f]; !ok {
			t.index[f] = 0
			t.files = append(t.files, f)
		}
	}
	slices.SortFunc(t.files, func(a, b dataFile) int {
		return cmp.Or(cmp.Compare(a.base, b.base), cmp.Compare(a.rel, b.rel))
	})
	for i, f := range t.files {
		t.index[f] = i
	}
	return t
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (t *dataFileTable) encode(e *encoder) {
	e.uvarint(uint64(len(t.files)))
	prefix := make([]int, len(t.files))
	for i := 1; i < len(t.files); i++ {
		prev, cur := t.files[i-1], t.files[i]
		p := commonPrefix(prev.base, cur.base)
		if len(prev.base) == len(cur.base) && p == len(cur.base) {
			p += commonPrefix(prev.rel, cur.rel)
		}
		prefix[i] = p
		e.uvarint(uint64(p))
	}
	for i, f := range t.files {
		e.uvarint(uint64(len(f.base) + len(f.rel) - prefix[i]))
	}
	for _, f := range t.files {
		e.uvarint(uint64(len(f.base)))
	}
	for i, f := range t.files {
		e.str(f.path()[prefix[i]:])
	}
}

func readFileID(d *decoder, files []dataFile, field string) dataFile {
	at := d.off
	i := d.uvarint(field)
	if d.err != nil {
		return dataFile{}
	}
	if i >= uint64(len(files)) {
		d.fail(ErrFormat, "%s at body byte %d: data file %d outside the table of %d", field, at, i, len(files))
		return dataFile{}
	}
	return files[i]
}

// checkRef checks a reference's offset and length as tensorstore does: their sum must fit
// in an int64 (unless missing is allowed and the reference is missing).
func checkRef(d *decoder, r ref, allowMissing bool, what string, i int) {
	if d.err != nil || (allowMissing && r.missing()) {
		return
	}
	if r.offset > math.MaxInt64 || r.length > math.MaxInt64-r.offset {
		d.fail(ErrFormat, "%s %d: offset %d + length %d overflows", what, i, r.offset, r.length)
	}
}

// ---- config and manifest ----

func readConfig(d *decoder) config {
	var c config
	copy(c.uuid[:], d.bytes(16, "uuid"))
	c.manifestKind = d.byte("manifest_kind")
	if d.err == nil && c.manifestKind > 1 {
		d.fail(ErrUnsupported, "manifest_kind %d (0 single and 1 numbered are known)", c.manifestKind)
	}
	c.maxInlineValueBytes = uint32(d.uvarintMax("max_inline_value_bytes", math.MaxUint32))
	c.maxDecodedNodeBytes = uint32(d.uvarintMax("max_decoded_node_bytes", math.MaxUint32))
	c.arityLog2 = d.byte("version_tree_arity_log2")
	if d.err == nil && (c.arityLog2 == 0 || c.arityLog2 > maxVersionTreeArityLog2) {
		d.fail(ErrFormat, "version_tree_arity_log2 %d outside [1, %d]", c.arityLog2, maxVersionTreeArityLog2)
	}
	switch method := d.uvarint("compression_method"); {
	case d.err != nil:
	case method == 0:
	case method == 1:
		c.compress = true
		c.level = d.int32le("zstd level")
		if d.err == nil && (c.level < -(1<<17) || c.level > 22) {
			d.fail(ErrFormat, "zstd level %d outside [%d, 22]", c.level, -(1 << 17))
		}
	default:
		d.fail(ErrUnsupported, "compression_method %d (0 none and 1 zstd are known)", method)
	}
	return c
}

func (c *config) encode(e *encoder) {
	e.bytes(c.uuid[:])
	e.byte(c.manifestKind)
	e.uvarint(uint64(c.maxInlineValueBytes))
	e.uvarint(uint64(c.maxDecodedNodeBytes))
	e.byte(c.arityLog2)
	if c.compress {
		e.uvarint(1)
		e.int32le(c.level)
	} else {
		e.uvarint(0)
	}
}

func decodeManifest(raw []byte, name string) (*manifest, error) {
	body, err := openEnvelope(raw, manifestMagic, name)
	if err != nil {
		return nil, err
	}
	d := &decoder{name: name, b: body}
	m := &manifest{config: readConfig(d)}
	if d.err != nil || m.manifestKind == 1 {
		return m, d.end()
	}
	files := readDataFileTable(d, "")
	m.versions = readVersions(d, files, m.arityLog2)
	if d.err != nil {
		return nil, d.err
	}
	m.nodes = readVersionNodeRefs(d, files, uint64(maxVersionTreeHeight(m.arityLog2)), true)
	if d.err == nil {
		checkManifestNodeRefs(d, m.arityLog2, m.versions[len(m.versions)-1].generation, m.nodes)
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return m, nil
}

func encodeManifest(m *manifest) ([]byte, error) {
	var e encoder
	m.config.encode(&e)
	if m.manifestKind == 0 {
		var files []dataFile
		for _, v := range m.versions {
			files = append(files, v.root.file)
		}
		for _, n := range m.nodes {
			files = append(files, n.loc.file)
		}
		t := newDataFileTable(files...)
		t.encode(&e)
		writeVersions(&e, t, m.versions)
		writeVersionNodeRefs(&e, t, m.nodes, true)
	}
	return sealEnvelope(manifestMagic, e.b, m.compress, int(m.level))
}

// ---- version tree ----

func readVersions(d *decoder, files []dataFile, arityLog2 uint8) []version {
	n := d.count("num_versions", 1<<arityLog2, 16)
	if d.err != nil {
		return nil
	}
	if n == 0 {
		d.fail(ErrFormat, "no versions")
		return nil
	}
	vs := make([]version, n)
	for i := range vs {
		vs[i].generation = d.uvarint("generation_number")
	}
	for i := range vs {
		vs[i].rootHeight = d.byte("root_height")
	}
	for i := range vs {
		vs[i].root.file = readFileID(d, files, "data_file_id")
	}
	for i := range vs {
		vs[i].root.offset = d.uvarint("data_file_offset")
	}
	for i := range vs {
		vs[i].root.length = d.uvarint("data_file_length")
		checkRef(d, vs[i].root, true, "root", i)
	}
	for i := range vs {
		vs[i].stats.numKeys = d.uvarint("num_keys")
	}
	for i := range vs {
		vs[i].stats.numTreeBytes = d.uvarint("num_tree_bytes")
	}
	for i := range vs {
		vs[i].stats.numIndirectValueBytes = d.uvarint("num_indirect_value_bytes")
	}
	for i := range vs {
		vs[i].commitTime = d.uint64le("commit_time")
	}
	if d.err != nil {
		return nil
	}
	for i, v := range vs {
		switch {
		case v.generation == 0:
			d.fail(ErrFormat, "generation_number[%d] is 0", i)
		case i > 0 && v.generation <= vs[i-1].generation:
			d.fail(ErrFormat, "generation_number[%d]=%d not above generation_number[%d]=%d", i, v.generation, i-1, vs[i-1].generation)
		case v.root.missing() && (v.rootHeight != 0 || v.stats != stats{}):
			d.fail(ErrFormat, "empty generation %d has root height %d or statistics", v.generation, v.rootHeight)
		}
	}
	if d.err == nil && (vs[0].generation-1)>>arityLog2 != (vs[n-1].generation-1)>>arityLog2 {
		d.fail(ErrFormat, "generations %d and %d cannot share a version tree leaf of arity %d", vs[0].generation, vs[n-1].generation, 1<<arityLog2)
	}
	return vs
}

func writeVersions(e *encoder, t *dataFileTable, vs []version) {
	e.uvarint(uint64(len(vs)))
	for _, v := range vs {
		e.uvarint(v.generation)
	}
	for _, v := range vs {
		e.byte(v.rootHeight)
	}
	for _, v := range vs {
		e.uvarint(uint64(t.index[v.root.file]))
	}
	for _, v := range vs {
		e.uvarint(v.root.offset)
	}
	for _, v := range vs {
		e.uvarint(v.root.length)
	}
	for _, v := range vs {
		e.uvarint(v.stats.numKeys)
	}
	for _, v := range vs {
		e.uvarint(v.stats.numTreeBytes)
	}
	for _, v := range vs {
		e.uvarint(v.stats.numIndirectValueBytes)
	}
	for _, v := range vs {
		e.uint64le(v.commitTime)
	}
}

func readVersionNodeRefs(d *decoder, files []dataFile, maxEntries uint64, withHeight bool) []versionNodeRef {
	n := d.count("num_children", maxEntries, 13)
	if d.err != nil || n == 0 {
		return nil
	}
	rs := make([]versionNodeRef, n)
	for i := range rs {
		rs[i].generation = d.uvarint("generation_number")
	}
	for i := range rs {
		rs[i].loc.file = readFileID(d, files, "data_file_id")
	}
	for i := range rs {
		rs[i].loc.offset = d.uvarint("data_file_offset")
	}
	for i := range rs {
		rs[i].loc.length = d.uvarint("data_file_length")
		checkRef(d, rs[i].loc, false, "version node", i)
	}
	for i := range rs {
		rs[i].numGenerations = d.uvarint("num_generations")
	}
	for i := range rs {
		rs[i].commitTime = d.uint64le("commit_time")
	}
	if withHeight {
		for i := range rs {
			rs[i].height = d.byte("entry_height")
		}
	}
	for i, r := range rs {
		if d.err != nil {
			break
		}
		switch {
		case r.generation == 0:
			d.fail(ErrFormat, "version node generation_number[%d] is 0", i)
		case i > 0 && r.generation <= rs[i-1].generation:
			d.fail(ErrFormat, "version node generation_number[%d]=%d not above generation_number[%d]=%d", i, r.generation, i-1, rs[i-1].generation)
		}
	}
	return rs
}

func writeVersionNodeRefs(e *encoder, t *dataFileTable, rs []versionNodeRef, withHeight bool) {
	e.uvarint(uint64(len(rs)))
	for _, r := range rs {
		e.uvarint(r.generation)
	}
	for _, r := range rs {
		e.uvarint(uint64(t.index[r.loc.file]))
	}
	for _, r := range rs {
		e.uvarint(r.loc.offset)
	}
	for _, r := range rs {
		e.uvarint(r.loc.length)
	}
	for _, r := range rs {
		e.uvarint(r.numGenerations)
	}
	for _, r := range rs {
		e.uint64le(r.commitTime)
	}
	if withHeight {
		for _, r := range rs {
			e.byte(r.height)
		}
	}
}

// checkManifestNodeRefs checks the version tree nodes a manifest refers to: heights in
// range and decreasing, each node covering the generations its height allows below the
// latest one.
func checkManifestNodeRefs(d *decoder, arityLog2 uint8, last uint64, rs []versionNodeRef) {
	maxHeight := maxVersionTreeHeight(arityLog2)
	for i, r := range rs {
		switch {
		case r.height == 0 || r.height > maxHeight:
			d.fail(ErrFormat, "version node entry_height[%d]=%d outside [1, %d]", i, r.height, maxHeight)
		case i > 0 && r.height >= rs[i-1].height:
			d.fail(ErrFormat, "version node entry_height[%d]=%d not below entry_height[%d]=%d", i, r.height, i-1, rs[i-1].height)
		}
	}
	if d.err != nil {
		return
	}
	// Walk the heights from 1 up, as the newest nodes come last: the node of height h
	// covers the generations that round down to the same multiple of arity^(h+1).
	i := len(rs)
	g := (last - 1) >> arityLog2 << arityLog2
	for h := uint8(1); g != 0 && i > 0; h++ {
		shift := uint(h+1) * uint(arityLog2)
		var next uint64
		if shift < 64 {
			next = (g - 1) >> shift << shift
		}
		if rs[i-1].height == h {
			i--
			if r := rs[i]; r.generation < next+1 || r.generation > g {
				d.fail(ErrFormat, "version node generation_number[%d]=%d outside [%d, %d] for height %d", i, r.generation, next+1, g, h)
				return
			}
		}
		g = next
	}
	if i != 0 {
		d.fail(ErrFormat, "version node %d (generation %d, height %d) does not fit latest generation %d", i-1, rs[i-1].generation, rs[i-1].height, last)
	}
}

func decodeVersionNode(raw []byte, name, transitive string) (*versionNode, error) {
	body, err := openEnvelope(raw, versionNodeMagic, name)
	if err != nil {
		return nil, err
	}
	d := &decoder{name: name, b: body}
	n := &versionNode{arityLog2: d.byte("version_tree_arity_log2"), height: d.byte("height")}
	if d.err == nil && (n.arityLog2 == 0 || n.arityLog2 > maxVersionTreeArityLog2) {
		d.fail(ErrFormat, "version_tree_arity_log2 %d outside [1, %d]", n.arityLog2, maxVersionTreeArityLog2)
	}
	if d.err == nil && n.height > maxVersionTreeHeight(n.arityLog2) {
		d.fail(ErrDepth, "height %d exceeds %d", n.height, maxVersionTreeHeight(n.arityLog2))
	}
	files := readDataFileTable(d, transitive)
	if n.height == 0 {
		n.versions = readVersions(d, files, n.arityLog2)
	} else {
		n.children = readVersionNodeRefs(d, files, 1<<n.arityLog2, false)
		if d.err == nil && len(n.children) == 0 {
			d.fail(ErrFormat, "interior version node without children")
		}
		for i := range n.children {
			n.children[i].height = n.height - 1
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return n, nil
}

// ---- B+tree nodes ----

func decodeBtreeNode(raw []byte, name, transitive string) (*btreeNode, error) {
	body, err := openEnvelope(raw, btreeNodeMagic, name)
	if err != nil {
		return nil, err
	}
	d := &decoder{name: name, b: body}
	n := &btreeNode{size: len(body), height: d.byte("height")}
	files := readDataFileTable(d, transitive)
	minBytes := 3
	if n.height > 0 {
		minBytes = 8
	}
	count := d.count("num_entries", maxNodeArity, minBytes)
	if d.err == nil && count == 0 {
		d.fail(ErrFormat, "empty b+tree node")
	}
	if d.err != nil {
		return nil, d.err
	}
	var scp []uint64
	n.keys, scp = readKeys(d, count, n.height > 0)
	if d.err != nil {
		return nil, d.err
	}
	if n.height == 0 {
		n.values = readLeafValues(d, files, count)
	} else {
		n.children = make([]child, count)
		for i := range n.children {
			n.children[i].subtreePrefix = int(scp[i])
		}
		for i := range n.children {
			n.children[i].loc.file = readFileID(d, files, "data_file_id")
		}
		for i := range n.children {
			n.children[i].loc.offset = d.uvarint("data_file_offset")
		}
		for i := range n.children {
			n.children[i].loc.length = d.uvarint("data_file_length")
			checkRef(d, n.children[i].loc, false, "child", i)
		}
		for i := range n.children {
			n.children[i].stats.numKeys = d.uvarint("num_keys")
		}
		for i := range n.children {
			n.children[i].stats.numTreeBytes = d.uvarint("num_tree_bytes")
		}
		for i := range n.children {
			n.children[i].stats.numIndirectValueBytes = d.uvarint("num_indirect_value_bytes")
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	return n, nil
}

// readKeys reads the prefix-compressed keys of a node (and, for an interior node, the
// subtree common prefix lengths).
func readKeys(d *decoder, n int, interior bool) ([]string, []uint64) {
	prefix := make([]uint64, n)
	suffix := make([]uint64, n)
	for i := 1; i < n; i++ {
		prefix[i] = d.uvarintMax("key_prefix_length", maxKeyLength)
	}
	for i := range n {
		suffix[i] = d.uvarintMax("key_suffix_length", maxKeyLength)
	}
	var scp []uint64
	if interior {
		scp = make([]uint64, n)
		for i := range n {
			scp[i] = d.uvarintMax("subtree_common_prefix_length", maxKeyLength)
		}
	}
	if d.err != nil {
		return nil, nil
	}
	// Check the lengths, and bound the memory the keys take once decompressed.
	total, prev := uint64(0), uint64(0)
	for i := range n {
		if prefix[i] > prev {
			d.fail(ErrFormat, "key %d: prefix length %d exceeds previous key length %d", i, prefix[i], prev)
			return nil, nil
		}
		length := prefix[i] + suffix[i]
		if length > maxKeyLength {
			d.fail(ErrFormat, "key %d: length %d exceeds %d", i, length, maxKeyLength)
			return nil, nil
		}
		if interior && scp[i] > length {
			d.fail(ErrFormat, "key %d: subtree common prefix length %d exceeds key length %d", i, scp[i], length)
			return nil, nil
		}
		total += length
		prev = length
	}
	if total > maxNodeKeyBytes {
		d.fail(ErrFormat, "keys take %d bytes, more than the %d this package allows a node", total, maxNodeKeyBytes)
		return nil, nil
	}
	keys := make([]string, n)
	for i := range n {
		s := d.bytes(suffix[i], "key_suffix")
		if d.err != nil {
			return nil, nil
		}
		if i == 0 {
			keys[0] = string(s)
			continue
		}
		keys[i] = keys[i-1][:prefix[i]] + string(s)
		if keys[i] <= keys[i-1] {
			d.fail(ErrFormat, "key %d %q not above key %d %q", i, keys[i], i-1, keys[i-1])
			return nil, nil
		}
	}
	return keys, scp
}

func readLeafValues(d *decoder, files []dataFile, n int) []leafValue {
	lengths := make([]uint64, n)
	for i := range lengths {
		lengths[i] = d.uvarint("value_length")
	}
	vs := make([]leafValue, n)
	for i := range vs {
		switch kind := d.byte("value_kind"); {
		case d.err != nil:
			return nil
		case kind == 0:
			if lengths[i] > maxInlineValueLength {
				d.fail(ErrFormat, "value %d: inline length %d exceeds %d", i, lengths[i], maxInlineValueLength)
				return nil
			}
		case kind == 1:
			vs[i].indirect = true
			vs[i].loc.length = lengths[i]
		default:
			d.fail(ErrFormat, "value %d: value_kind %d (0 inline and 1 out of line are known)", i, kind)
			return nil
		}
	}
	for i := range vs {
		if vs[i].indirect {
			vs[i].loc.file = readFileID(d, files, "data_file_id")
		}
	}
	for i := range vs {
		if vs[i].indirect {
			vs[i].loc.offset = d.uvarint("data_file_offset")
			checkRef(d, vs[i].loc, false, "value", i)
		}
	}
	for i := range vs {
		if !vs[i].indirect {
			vs[i].inline = d.bytes(lengths[i], "value")
		}
	}
	if d.err != nil {
		return nil
	}
	return vs
}

// encodeBtreeNode encodes a node whose keys are relative to the prefix its path implies. It
// writes each data file's whole base path, so the node must be read with an empty
// transitive path (from a data file whose base path is empty).
func encodeBtreeNode(n *btreeNode, c *config) ([]byte, error) {
	var files []dataFile
	for _, v := range n.values {
		if v.indirect {
			files = append(files, v.loc.file)
		}
	}
	for _, ch := range n.children {
		files = append(files, ch.loc.file)
	}
	t := newDataFileTable(files...)
	var e encoder
	e.byte(n.height)
	t.encode(&e)
	e.uvarint(uint64(len(n.keys)))
	prefix := make([]int, len(n.keys))
	for i := 1; i < len(n.keys); i++ {
		prefix[i] = commonPrefix(n.keys[i-1], n.keys[i])
		e.uvarint(uint64(prefix[i]))
	}
	for i, k := range n.keys {
		e.uvarint(uint64(len(k) - prefix[i]))
	}
	for _, ch := range n.children {
		e.uvarint(uint64(ch.subtreePrefix))
	}
	for i, k := range n.keys {
		e.str(k[prefix[i]:])
	}
	if n.height == 0 {
		for _, v := range n.values {
			e.uvarint(v.size())
		}
		for _, v := range n.values {
			if v.indirect {
				e.byte(1)
			} else {
				e.byte(0)
			}
		}
		for _, v := range n.values {
			if v.indirect {
				e.uvarint(uint64(t.index[v.loc.file]))
			}
		}
		for _, v := range n.values {
			if v.indirect {
				e.uvarint(v.loc.offset)
			}
		}
		for _, v := range n.values {
			if !v.indirect {
				e.bytes(v.inline)
			}
		}
	} else {
		for _, ch := range n.children {
			e.uvarint(uint64(t.index[ch.loc.file]))
		}
		for _, ch := range n.children {
			e.uvarint(ch.loc.offset)
		}
		for _, ch := range n.children {
			e.uvarint(ch.loc.length)
		}
		for _, ch := range n.children {
			e.uvarint(ch.stats.numKeys)
		}
		for _, ch := range n.children {
			e.uvarint(ch.stats.numTreeBytes)
		}
		for _, ch := range n.children {
			e.uvarint(ch.stats.numIndirectValueBytes)
		}
	}
	return sealEnvelope(btreeNodeMagic, e.b, c.compress, int(c.level))
}

// String describes a reference for error messages: the file and byte range.
func (r ref) String() string {
	return fmt.Sprintf("%s[%d:%d]", r.file.path(), r.offset, r.offset+r.length)
}
