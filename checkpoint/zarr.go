package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// Format is the on-disk layout of a checkpoint's arrays.
type Format int

const (
	// ZarrV2 is jax.experimental.array_serialization's layout (serialization.get_tensorstore_spec):
	// zarr v2, zstd level 1, one chunk per shard, every chunk written. The default.
	ZarrV2 Format = iota
	// Zarr3 is JAX's zarr3 driver on plain files (tensorstore_impl.get_tensorstore_spec with
	// ocdbt=False and an array: the layout JAX's pytree checkpoints use inside OCDBT):
	// zarr v3, chunks stored raw as little-endian bytes, a shard split into chunks of at most
	// 2 GiB as JAX splits it, and chunks equal to the fill value (zero) not written.
	Zarr3
	// Orbax is orbax-checkpoint's default layout (StandardCheckpointer, use_ocdbt): the ZarrV2
	// arrays kept as keys ("params.w/.zarray", "params.w/0.0") of one OCDBT database at the
	// checkpoint's root (package checkpoint/ocdbt; values over 1 KiB in its data file, as
	// Orbax configures it), and Orbax's _METADATA, which describes the tree: each name split
	// at "." into dictionary keys. Orbax restores it with or without a target tree; JAX's
	// array_serialization reads each array through tensorstore's ocdbt driver.
	Orbax
)

// String returns "zarr" or "zarr3" (tensorstore's driver names), or "orbax".
func (f Format) String() string {
	switch f {
	case ZarrV2:
		return "zarr"
	case Zarr3:
		return "zarr3"
	case Orbax:
		return "orbax"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// The metadata files of the two formats.
const (
	zarr2Meta = ".zarray"
	zarr3Meta = "zarr.json"
)

// zstdLevel is the zstd level JAX's serialization writes.
const zstdLevel = 1

// fileSizeTarget is the largest chunk JAX's zarr3 metadata asks for (tensorstore_impl's
// _FILE_SIZE_TARGET); a shard up to 10% over it stays one chunk.
const fileSizeTarget = 2 << 30

// layout is one zarr array's metadata as this package uses it, whichever the format.
type layout struct {
	format Format
	dtype  dtypes.DType
	shape  []int
	chunks []int
	zstd   bool   // chunks are zstd frames, else raw bytes
	sep    string // between a chunk key's grid coordinates
	prefix bool   // zarr3's default key encoding: "c" before the coordinates
	sparse bool   // a chunk not written is the fill value (zero), not an error
}

// key returns the file name of the chunk at grid position pos, relative to the array's
// directory ("1.0" in zarr v2, "c/1/0" in zarr3; "0" and "c" for a scalar).
func (l layout) key(pos []int) string {
	parts := make([]string, len(pos))
	for i, p := range pos {
		parts[i] = strconv.Itoa(p)
	}
	if l.prefix {
		return strings.Join(append([]string{"c"}, parts...), l.sep)
	}
	if len(pos) == 0 {
		return "0"
	}
	return strings.Join(parts, l.sep)
}

// chunkBytes returns the uncompressed size of one chunk.
func (l layout) chunkBytes() int { return shapes.Make(l.dtype, l.chunks...).Bytes() }

// zarrDTypes are the zarr v2 dtype strings of the types NumPy has a type string for, as
// tensorstore writes them (little-endian; "|" where byte order does not apply). The other
// types tensorstore stores by their ml_dtypes name (bfloat16, float8_e4m3fn, int4, ...), as
// zarr3 stores every type.
var zarrDTypes = map[dtypes.DType]string{
	dtypes.Bool: "|b1", dtypes.Int8: "|i1", dtypes.Uint8: "|u1",
	dtypes.Int16: "<i2", dtypes.Uint16: "<u2", dtypes.Int32: "<i4", dtypes.Uint32: "<u4",
	dtypes.Int64: "<i8", dtypes.Uint64: "<u8",
	dtypes.Float16: "<f2", dtypes.Float32: "<f4", dtypes.Float64: "<f8",
	dtypes.Complex64: "<c8", dtypes.Complex128: "<c16",
}

// storable reports whether tensorstore stores d: every type but uint4 and uint2.
func storable(d dtypes.DType) error {
	if !shapes.Supported(d) || d == dtypes.U4 || d == dtypes.U2 {
		return fmt.Errorf("%w: %v (zarr and tensorstore have no such type)", ErrDType, d)
	}
	return nil
}

// numpyDType returns the type NumPy (ml_dtypes) calls name, for a storable type.
func numpyDType(name string) (dtypes.DType, bool) {
	for d := dtypes.DType(1); d < 64; d++ {
		if shapes.Supported(d) && shapes.NumPyName(d) == name && storable(d) == nil {
			return d, true
		}
	}
	return 0, false
}

// parseZarr2DType reads a zarr v2 dtype: a type string of zarrDTypes (one-byte types with
// either "|" or "<"), or an ml_dtypes name.
func parseZarr2DType(s string) (dtypes.DType, error) {
	for d, z := range zarrDTypes {
		if s == z || len(s) > 1 && z[1:] == s[1:] && (s[0] == '|' || s[0] == '<') && shapes.ElementBytes(d) == 1 {
			return d, nil
		}
	}
	if strings.HasPrefix(s, ">") {
		return 0, fmt.Errorf("%w: big-endian dtype %q", ErrDType, s)
	}
	if d, ok := numpyDType(s); ok && zarrDTypes[d] == "" {
		return d, nil
	}
	return 0, fmt.Errorf("%w: zarr dtype %q", ErrDType, s)
}

// encodeJSON writes v as tensorstore writes metadata: compact, "<" unescaped, no newline.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<f4", not "\u003cf4"
	if err := enc.Encode(v); err != nil {
		panic(err) // metadata of ints, strings and raw JSON always marshals
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// zarray is .zarray as tensorstore writes it: its fields in sorted key order, so that
// encoding/json writes them as tensorstore does.
type zarray struct {
	Chunks             []int      `json:"chunks"`
	Compressor         *zarrCodec `json:"compressor"`
	DimensionSeparator string     `json:"dimension_separator"`
	DType              string     `json:"dtype"`
	FillValue          any        `json:"fill_value"`
	Filters            []any      `json:"filters"`
	Order              string     `json:"order"`
	Shape              []int      `json:"shape"`
	ZarrFormat         int        `json:"zarr_format"`
}

// zarrCodec is a zarr v2 compressor: JAX's is {"id": "zstd", "level": 1}.
type zarrCodec struct {
	ID    string `json:"id"`
	Level int    `json:"level"`
}

// zarr3Array is zarr.json as tensorstore writes JAX's zarr3 arrays, fields in key order.
type zarr3Array struct {
	ChunkGrid        zarr3Named      `json:"chunk_grid"`
	ChunkKeyEncoding zarr3Named      `json:"chunk_key_encoding"`
	Codecs           []zarr3Named    `json:"codecs"`
	DataType         string          `json:"data_type"`
	DimensionNames   []any           `json:"dimension_names,omitempty"`
	FillValue        json.RawMessage `json:"fill_value"`
	NodeType         string          `json:"node_type"`
	Shape            []int           `json:"shape"`
	// StorageTransformers is never written; one read is refused.
	StorageTransformers []any `json:"storage_transformers,omitempty"`
	ZarrFormat          int   `json:"zarr_format"`
}

// zarr3Named is zarr3's {"configuration": {...}, "name": "..."} object.
type zarr3Named struct {
	Configuration map[string]any `json:"configuration,omitempty"`
	Name          string         `json:"name"`
}

// newLayout returns the layout Save writes for an array of dtype d and shape, split into
// shards of shardShape, and its metadata file's name and bytes.
func newLayout(f Format, d dtypes.DType, shape, shardShape []int) (layout, string, []byte, error) {
	if err := storable(d); err != nil {
		return layout{}, "", nil, err
	}
	switch f {
	case ZarrV2, Orbax:
		dtype := zarrDTypes[d]
		if dtype == "" {
			dtype = shapes.NumPyName(d)
		}
		chunks := make([]int, len(shardShape))
		for i, c := range shardShape {
			chunks[i] = max(c, 1) // zarr chunks are at least 1 wide, even for an empty dimension
		}
		l := layout{format: ZarrV2, dtype: d, shape: shape, chunks: chunks, zstd: true, sep: "."}
		return l, zarr2Meta, encodeJSON(zarray{
			Chunks:             chunks,
			Compressor:         &zarrCodec{ID: "zstd", Level: zstdLevel},
			DimensionSeparator: ".",
			DType:              dtype,
			Order:              "C",
			Shape:              shape,
			ZarrFormat:         2,
		}), nil
	case Zarr3:
		chunks := jaxChunkShape(shardShape, shapes.ElementBytes(d))
		l := layout{format: f, dtype: d, shape: shape, chunks: chunks, sep: "/", prefix: true, sparse: true}
		bytesCodec := zarr3Named{Name: "bytes", Configuration: map[string]any{"endian": "little"}}
		if shapes.ElementBytes(d) == 1 {
			bytesCodec.Configuration = nil // tensorstore says no byte order for one-byte types
		}
		return l, zarr3Meta, encodeJSON(zarr3Array{
			ChunkGrid:        zarr3Named{Name: "regular", Configuration: map[string]any{"chunk_shape": chunks}},
			ChunkKeyEncoding: zarr3Named{Name: "default"},
			Codecs:           []zarr3Named{bytesCodec},
			DataType:         shapes.NumPyName(d),
			FillValue:        zeroFill(d),
			NodeType:         "array",
			Shape:            shape,
			ZarrFormat:       3,
		}), nil
	}
	return layout{}, "", nil, fmt.Errorf("%w: format %v", ErrFormat, f)
}

// zeroFill returns zarr3's fill value 0 as tensorstore writes it for type d.
func zeroFill(d dtypes.DType) json.RawMessage {
	switch {
	case d == dtypes.Bool:
		return json.RawMessage("false")
	case shapes.IsComplex(d):
		return json.RawMessage("[0.0,0.0]")
	case shapes.IsFloat(d):
		return json.RawMessage("0.0")
	}
	return json.RawMessage("0")
}

// jaxChunkShape returns the chunk shape JAX's zarr3 metadata gives a shard of shape local
// with elem bytes per element (tensorstore_impl._compute_chunk_shape): while the chunk is over
// 110% of fileSizeTarget, the dimension with the smallest next prime factor (the first on a
// tie) is divided by it, never down to its last factor; a dimension of 0 becomes 1.
func jaxChunkShape(local []int, elem int) []int {
	chunk := make([]int, len(local))
	size := elem
	for i, n := range local {
		chunk[i] = max(n, 1)
		size *= n
	}
	if size == 0 {
		return chunk
	}
	factors := make([][]int, len(local))
	for i, n := range local {
		factors[i] = primeFactors(n)
	}
	for float64(size) > 1.1*fileSizeTarget {
		axis, divisor := -1, 1
		for i, f := range factors {
			if len(f) <= 1 {
				continue // JAX never divides a dimension down to 1
			}
			if axis < 0 || f[0] < divisor {
				axis, divisor = i, f[0]
			}
		}
		if axis < 0 {
			break
		}
		factors[axis] = factors[axis][1:]
		chunk[axis] /= divisor
		size /= divisor
	}
	return chunk
}

// primeFactors returns n's prime factors, smallest first; none for 1.
func primeFactors(n int) []int {
	var out []int
	for p := 2; p*p <= n; p++ {
		for n%p == 0 {
			out = append(out, p)
			n /= p
		}
	}
	if n > 1 {
		out = append(out, n)
	}
	return out
}

// parseZarray reads .zarray text, checking that it is an array this package reads.
func parseZarray(text []byte) (layout, error) {
	var z zarray
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&z); err != nil {
		return layout{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	switch {
	case z.ZarrFormat != 2:
		return layout{}, fmt.Errorf("%w: zarr_format %d (2 is read)", ErrFormat, z.ZarrFormat)
	case z.Order != "C":
		return layout{}, fmt.Errorf("%w: order %q (C is read)", ErrFormat, z.Order)
	case len(z.Filters) > 0:
		return layout{}, fmt.Errorf("%w: filters %v (none is read)", ErrFormat, z.Filters)
	case z.Compressor != nil && z.Compressor.ID != "zstd":
		return layout{}, fmt.Errorf("%w: compressor %q (zstd or none is read)", ErrFormat, z.Compressor.ID)
	}
	if z.DimensionSeparator == "" {
		z.DimensionSeparator = "."
	}
	if z.DimensionSeparator != "." && z.DimensionSeparator != "/" {
		return layout{}, fmt.Errorf("%w: dimension_separator %q", ErrFormat, z.DimensionSeparator)
	}
	d, err := parseZarr2DType(z.DType)
	if err != nil {
		return layout{}, err
	}
	l := layout{format: ZarrV2, dtype: d, shape: z.Shape, chunks: z.Chunks, zstd: z.Compressor != nil, sep: z.DimensionSeparator}
	return l, l.check()
}

// parseZarr3 reads zarr.json text, checking that it is an array this package reads: a
// regular grid, the default or v2 key encoding, the bytes codec (little-endian) and at most
// zstd after it, a fill value of zero.
func parseZarr3(text []byte) (layout, error) {
	var z zarr3Array
	if err := json.Unmarshal(text, &z); err != nil {
		return layout{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	switch {
	case z.ZarrFormat != 3:
		return layout{}, fmt.Errorf("%w: zarr_format %d (3 is read)", ErrFormat, z.ZarrFormat)
	case z.NodeType != "array":
		return layout{}, fmt.Errorf("%w: node_type %q (an array is read)", ErrFormat, z.NodeType)
	case z.ChunkGrid.Name != "regular":
		return layout{}, fmt.Errorf("%w: chunk_grid %q (regular is read)", ErrFormat, z.ChunkGrid.Name)
	case len(z.StorageTransformers) > 0:
		return layout{}, fmt.Errorf("%w: storage_transformers (none is read)", ErrFormat)
	}
	d, ok := numpyDType(z.DataType)
	if !ok {
		return layout{}, fmt.Errorf("%w: zarr3 data_type %q", ErrDType, z.DataType)
	}
	l := layout{format: Zarr3, dtype: d, shape: z.Shape, sparse: true}
	chunks, err := intList(z.ChunkGrid.Configuration["chunk_shape"])
	if err != nil {
		return layout{}, fmt.Errorf("%w: chunk_shape: %v", ErrFormat, err)
	}
	l.chunks = chunks
	sep, _ := z.ChunkKeyEncoding.Configuration["separator"].(string)
	switch z.ChunkKeyEncoding.Name {
	case "default":
		l.prefix, l.sep = true, "/"
	case "v2":
		l.sep = "."
	default:
		return layout{}, fmt.Errorf("%w: chunk_key_encoding %q", ErrFormat, z.ChunkKeyEncoding.Name)
	}
	if sep != "" {
		l.sep = sep
	}
	if l.sep != "." && l.sep != "/" {
		return layout{}, fmt.Errorf("%w: chunk key separator %q", ErrFormat, l.sep)
	}
	for i, c := range z.Codecs {
		switch {
		case c.Name == "bytes" && i == 0:
			if e, _ := c.Configuration["endian"].(string); e != "" && e != "little" {
				return layout{}, fmt.Errorf("%w: %s-endian bytes", ErrFormat, e)
			}
		case c.Name == "zstd" && i > 0 && !l.zstd:
			l.zstd = true
		default:
			return layout{}, fmt.Errorf("%w: codec %q at %d (bytes, then zstd, is read)", ErrFormat, c.Name, i)
		}
	}
	if !isZero(z.FillValue) {
		return layout{}, fmt.Errorf("%w: fill_value %s (0 is read)", ErrFormat, z.FillValue)
	}
	return l, l.check()
}

// check refuses shapes and chunk shapes that do not go together.
func (l layout) check() error {
	if len(l.chunks) != len(l.shape) {
		return fmt.Errorf("%w: chunks %v for shape %v", ErrFormat, l.chunks, l.shape)
	}
	for i, n := range l.shape {
		if n < 0 || l.chunks[i] < 1 {
			return fmt.Errorf("%w: shape %v, chunks %v", ErrFormat, l.shape, l.chunks)
		}
		if l.chunks[i] > max(n, 1) {
			// Writers chunk within the array; a larger chunk would only make a reader allocate it.
			return fmt.Errorf("%w: chunks %v are larger than the array's shape %v", ErrFormat, l.chunks, l.shape)
		}
	}
	if _, ok := byteSize(l.chunks, shapes.ElementBytes(l.dtype)); !ok {
		return fmt.Errorf("%w: chunks %v are too large", ErrFormat, l.chunks)
	}
	if _, ok := byteSize(l.shape, shapes.ElementBytes(l.dtype)); !ok {
		return fmt.Errorf("%w: shape %v is too large", ErrFormat, l.shape)
	}
	return nil
}

// byteSize returns the bytes of an array of dims, false on overflow.
func byteSize(dims []int, elem int) (int, bool) {
	n := elem
	for _, d := range dims {
		if d != 0 && n > math.MaxInt/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// intList reads a JSON list of non-negative ints.
func intList(v any) ([]int, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list: %v", v)
	}
	out := make([]int, len(list))
	for i, e := range list {
		f, ok := e.(float64)
		if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return nil, fmt.Errorf("not a size: %v", e)
		}
		out[i] = int(f)
	}
	return out, nil
}

// isZero reports whether a zarr3 fill value is all zero bits: 0, 0.0, false, [0.0, 0.0] (not
// -0.0, whose sign bit is set).
func isZero(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case bool:
		return !v
	case float64:
		return v == 0 && !math.Signbit(v)
	case []any:
		return len(v) == 2 && isZero(json.RawMessage(fmt.Sprint(v[0]))) && isZero(json.RawMessage(fmt.Sprint(v[1])))
	}
	return false
}
