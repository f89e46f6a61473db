package ocdbt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Magic numbers of the three encoded objects (big-endian at their start).
const (
	manifestMagic    = 0x0cdb3a2a
	versionNodeMagic = 0x0cdb1234
	btreeNodeMagic   = 0x0cdb20de
)

// Limits that keep a malformed or hostile database from making the reader allocate without
// bound. The format's own limits (key and path length, node arity) are checked where they
// apply.
const (
	// maxDecodedBytes bounds the decompressed body of one manifest or node (tensorstore's
	// default max_decoded_node_bytes is 8 MiB).
	maxDecodedBytes = 64 << 20
	// maxNodeKeyBytes bounds the total length of the keys of one B+tree node once their
	// prefix compression is undone.
	maxNodeKeyBytes = 64 << 20
	// maxKeyLength and maxPathLength are the format's limits on keys and data file paths.
	maxKeyLength  = 65535
	maxPathLength = 65535
	// maxNodeArity is the format's limit on the entries of a B+tree node.
	maxNodeArity = 1 << 20
	// maxInlineValueLength is the format's limit on a value stored in a leaf node.
	maxInlineValueLength = 1 << 20
	// maxVersionTreeArityLog2 is the format's limit on version_tree_arity_log2.
	maxVersionTreeArityLog2 = 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decoder reads the fields of one decoded body. The first error sticks: later reads return
// zero values, and err names the object and what went wrong.
type decoder struct {
	name string // the object, for errors: "manifest.ocdbt", "b+tree node d/ab..[0:120]"
	b    []byte
	off  int
	err  error
}

func (d *decoder) fail(kind error, format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("ocdbt: %s: %w: %s", d.name, kind, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) remaining() int { return len(d.b) - d.off }

func (d *decoder) byte(field string) byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail(ErrTruncated, "%s at body byte %d: end of data", field, d.off)
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

// bytes returns the next n bytes, a slice of the body (not a copy).
func (d *decoder) bytes(n uint64, field string) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(d.remaining()) {
		d.fail(ErrTruncated, "%s at body byte %d: %d bytes wanted, %d left", field, d.off, n, d.remaining())
		return nil
	}
	v := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return v
}

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail(ErrTruncated, "%s at body byte %d: varint runs past the end", field, d.off)
		return 0
	case n < 0:
		d.fail(ErrFormat, "%s at body byte %d: varint overflows 64 bits", field, d.off)
		return 0
	}
	d.off += n
	return v
}

// uvarintMax reads a varint and checks that it is at most max.
func (d *decoder) uvarintMax(field string, max uint64) uint64 {
	at := d.off
	v := d.uvarint(field)
	if d.err == nil && v > max {
		d.fail(ErrFormat, "%s at body byte %d: %d exceeds limit %d", field, at, v, max)
		return 0
	}
	return v
}

// count reads a number of items that each take at least minBytes more bytes of the body,
// and checks it against what is left and against max, so that no slice is made larger
// than the data that fills it.
func (d *decoder) count(field string, max uint64, minBytes int) int {
	at := d.off
	v := d.uvarint(field)
	if d.err != nil {
		return 0
	}
	if v > max {
		d.fail(ErrFormat, "%s at body byte %d: %d exceeds limit %d", field, at, v, max)
		return 0
	}
	if v*uint64(minBytes) > uint64(d.remaining()) {
		d.fail(ErrTruncated, "%s at body byte %d: %d items need at least %d bytes, %d left", field, at, v, v*uint64(minBytes), d.remaining())
		return 0
	}
	return int(v)
}

func (d *decoder) uint64le(field string) uint64 {
	b := d.bytes(8, field)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) int32le(field string) int32 {
	b := d.bytes(4, field)
	if b == nil {
		return 0
	}
	return int32(binary.LittleEndian.Uint32(b))
}

// end checks that the whole body was read.
func (d *decoder) end() error {
	if d.err == nil && d.off != len(d.b) {
		d.fail(ErrFormat, "%d bytes left over after body byte %d", len(d.b)-d.off, d.off)
	}
	return d.err
}

// encoder appends fields to a body.
type encoder struct{ b []byte }

func (e *encoder) byte(v byte)       { e.b = append(e.b, v) }
func (e *encoder) bytes(v []byte)    { e.b = append(e.b, v...) }
func (e *encoder) str(v string)      { e.b = append(e.b, v...) }
func (e *encoder) uvarint(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) uint64le(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) int32le(v int32)   { e.b = binary.LittleEndian.AppendUint32(e.b, uint32(v)) }

var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecodedBytes))
})

// openEnvelope checks the outer header and footer of an encoded manifest or node (magic,
// length, CRC-32C, format version, compression) and returns its decoded body.
func openEnvelope(raw []byte, magic uint32, name string) ([]byte, error) {
	const minLength = 4 + 8 + 4
	if len(raw) < minLength {
		return nil, fmt.Errorf("ocdbt: %s: %w: %d bytes, less than the %d of header and checksum", name, ErrTruncated, len(raw), minLength)
	}
	if m := binary.BigEndian.Uint32(raw); m != magic {
		return nil, fmt.Errorf("ocdbt: %s: %w: %#08x, want %#08x", name, ErrMagic, m, magic)
	}
	if n := binary.LittleEndian.Uint64(raw[4:]); n != uint64(len(raw)) {
		if n > uint64(len(raw)) {
			return nil, fmt.Errorf("ocdbt: %s: %w: header says %d bytes, have %d", name, ErrTruncated, n, len(raw))
		}
		return nil, fmt.Errorf("ocdbt: %s: %w: header says %d bytes, have %d", name, ErrFormat, n, len(raw))
	}
	body := raw[:len(raw)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(raw[len(raw)-4:]); got != want {
		return nil, fmt.Errorf("ocdbt: %s: %w: stored crc32c %#08x, computed %#08x", name, ErrChecksum, want, got)
	}
	d := &decoder{name: name, b: body, off: 12}
	version := d.uvarint("format version")
	compression := d.uvarint("compression format")
	if d.err != nil {
		return nil, d.err
	}
	if version != 0 {
		return nil, fmt.Errorf("ocdbt: %s: %w: format version %d (this package reads 0)", name, ErrUnsupported, version)
	}
	rest := body[d.off:]
	switch compression {
	case 0:
		return rest, nil
	case 1:
		return decompress(rest, name)
	default:
		return nil, fmt.Errorf("ocdbt: %s: %w: compression format %d (0 none and 1 zstd are known)", name, ErrUnsupported, compression)
	}
}

func decompress(src []byte, name string) ([]byte, error) {
	dec, err := zstdDecoder()
	if err != nil {
		return nil, fmt.Errorf("ocdbt: zstd decoder: %w", err)
	}
	out, err := dec.DecodeAll(src, nil)
	if err != nil {
		return nil, fmt.Errorf("ocdbt: %s: %w: zstd body (at most %d bytes decoded): %v", name, ErrFormat, maxDecodedBytes, err)
	}
	return out, nil
}

// sealEnvelope encodes body as a manifest or node: header, body (zstd-compressed at level
// when compress is set), CRC-32C.
func sealEnvelope(magic uint32, body []byte, compress bool, level int) ([]byte, error) {
	out := make([]byte, 12, 12+len(body)+8)
	binary.BigEndian.PutUint32(out, magic)
	out = binary.AppendUvarint(out, 0) // format version
	if compress {
		out = binary.AppendUvarint(out, 1)
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstdLevel(level)))
		if err != nil {
			return nil, fmt.Errorf("ocdbt: zstd encoder: %w", err)
		}
		out = enc.EncodeAll(body, out)
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("ocdbt: zstd encoder: %w", err)
		}
	} else {
		out = binary.AppendUvarint(out, 0)
		out = append(out, body...)
	}
	binary.LittleEndian.PutUint64(out[4:], uint64(len(out)+4))
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}

// zstdLevel maps a zstd library level (0 meaning the library's default, 3) onto the levels
// of klauspost/compress.
func zstdLevel(level int) zstd.EncoderLevel {
	if level == 0 {
		level = 3
	}
	return zstd.EncoderLevelFromZstd(level)
}
