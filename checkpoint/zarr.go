package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// metaName is the metadata file of a zarr v2 array.
const metaName = ".zarray"

// zarrDTypes are the zarr v2 dtype strings of the types NumPy has a type string for, as
// tensorstore writes them (little-endian; "|" where byte order does not apply). The other
// types tensorstore stores by their ml_dtypes name (bfloat16, float8_e4m3fn, int4, ...).
var zarrDTypes = map[dtypes.DType]string{
	dtypes.Bool: "|b1", dtypes.Int8: "|i1", dtypes.Uint8: "|u1",
	dtypes.Int16: "<i2", dtypes.Uint16: "<u2", dtypes.Int32: "<i4", dtypes.Uint32: "<u4",
	dtypes.Int64: "<i8", dtypes.Uint64: "<u8",
	dtypes.Float16: "<f2", dtypes.Float32: "<f4", dtypes.Float64: "<f8",
	dtypes.Complex64: "<c8", dtypes.Complex128: "<c16",
}

// zarrDType returns the zarr v2 dtype string of d, or an error wrapping ErrDType for a type
// tensorstore has none for (uint4, uint2).
func zarrDType(d dtypes.DType) (string, error) {
	if s, ok := zarrDTypes[d]; ok {
		return s, nil
	}
	switch d {
	case dtypes.U4, dtypes.U2:
	default:
		if shapes.Supported(d) && shapes.NumPyName(d) != "" {
			return shapes.NumPyName(d), nil
		}
	}
	return "", fmt.Errorf("%w: %v (zarr and tensorstore have no such type)", ErrDType, d)
}

// parseZarrDType is zarrDType's inverse; it also reads "<b1"/"|i1"-style variants zarr
// writers use ("b1" with any byte-order mark, "|"-marked one-byte types).
func parseZarrDType(s string) (dtypes.DType, error) {
	for d, z := range zarrDTypes {
		if s == z || len(s) > 1 && z[1:] == s[1:] && (s[0] == '|' || s[0] == '<') && shapes.ElementBytes(d) == 1 {
			return d, nil
		}
	}
	if strings.HasPrefix(s, ">") {
		return 0, fmt.Errorf("%w: big-endian dtype %q", ErrDType, s)
	}
	for d := dtypes.DType(1); d < 64; d++ {
		if shapes.Supported(d) && shapes.NumPyName(d) == s && zarrDTypes[d] == "" && d != dtypes.U4 && d != dtypes.U2 {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%w: zarr dtype %q", ErrDType, s)
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

// zstdLevel is the zstd level JAX's serialization writes.
const zstdLevel = 1

// newZarray returns the metadata of an array of the given dtype and shape, one chunk per shard
// of chunkShape.
func newZarray(dtype string, shape, chunkShape []int) zarray {
	chunks := make([]int, len(chunkShape))
	for i, c := range chunkShape {
		chunks[i] = max(c, 1) // zarr chunks are at least 1 wide, even for an empty dimension
	}
	return zarray{
		Chunks:             chunks,
		Compressor:         &zarrCodec{ID: "zstd", Level: zstdLevel},
		DimensionSeparator: ".",
		DType:              dtype,
		Order:              "C",
		Shape:              append([]int{}, shape...),
		ZarrFormat:         2,
	}
}

// encode returns the metadata as tensorstore writes it: compact, no trailing newline.
func (z zarray) encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<f4", not "\u003cf4"
	if err := enc.Encode(z); err != nil {
		panic(err) // a zarray of ints and strings always marshals
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// parseZarray reads .zarray text, checking that it is an array this package reads.
func parseZarray(text []byte) (zarray, dtypes.DType, error) {
	var z zarray
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&z); err != nil {
		return z, 0, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	switch {
	case z.ZarrFormat != 2:
		return z, 0, fmt.Errorf("%w: zarr_format %d (2 is read)", ErrFormat, z.ZarrFormat)
	case z.Order != "C":
		return z, 0, fmt.Errorf("%w: order %q (C is read)", ErrFormat, z.Order)
	case len(z.Filters) > 0:
		return z, 0, fmt.Errorf("%w: filters %v (none is read)", ErrFormat, z.Filters)
	case z.Compressor != nil && z.Compressor.ID != "zstd":
		return z, 0, fmt.Errorf("%w: compressor %q (zstd or none is read)", ErrFormat, z.Compressor.ID)
	case len(z.Chunks) != len(z.Shape):
		return z, 0, fmt.Errorf("%w: chunks %v for shape %v", ErrFormat, z.Chunks, z.Shape)
	}
	if z.DimensionSeparator == "" {
		z.DimensionSeparator = "."
	}
	if z.DimensionSeparator != "." && z.DimensionSeparator != "/" {
		return z, 0, fmt.Errorf("%w: dimension_separator %q", ErrFormat, z.DimensionSeparator)
	}
	for i, n := range z.Shape {
		if n < 0 || z.Chunks[i] < 1 {
			return z, 0, fmt.Errorf("%w: shape %v, chunks %v", ErrFormat, z.Shape, z.Chunks)
		}
	}
	d, err := parseZarrDType(z.DType)
	return z, d, err
}

// chunkKey returns the file name of the chunk at grid position pos ("1.0"; "0" for a
// scalar, whose one chunk zarr numbers 0).
func chunkKey(pos []int, sep string) string {
	if len(pos) == 0 {
		return "0"
	}
	parts := make([]string, len(pos))
	for i, p := range pos {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, sep)
}
