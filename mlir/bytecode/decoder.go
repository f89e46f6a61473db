package bytecode

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// decoder reads the primitives of the bytecode format (bytes, prefix varints, strings,
// sections) from in[pos:end]. The first error sticks: later reads return zero values and
// do not move, so a caller checks err once after a group of reads. Every length read from
// the input is checked against the bytes that remain before anything is allocated.
type decoder struct {
	in       []byte // the whole input, so that offsets in errors are absolute
	pos, end int
	sec      string // the section, for errors
	err      error
}

func newDecoder(in []byte, start, end int, sec string) *decoder {
	return &decoder{in: in, pos: start, end: end, sec: sec}
}

// sub returns a decoder for the next n bytes and skips them here.
func (d *decoder) sub(n uint64, sec string) *decoder {
	if !d.need(n) {
		return &decoder{in: d.in, pos: d.pos, end: d.pos, sec: sec, err: d.err}
	}
	s := &decoder{in: d.in, pos: d.pos, end: d.pos + int(n), sec: sec}
	d.pos += int(n)
	return s
}

func (d *decoder) empty() bool { return d.err != nil || d.pos >= d.end }

// left returns the bytes left, never less than zero (a position past the end has none
// left; the difference must never reach an unsigned comparison as a huge number).
func (d *decoder) left() int { return max(d.end-d.pos, 0) }

// fail records the first error, as ErrBytecode at the current offset.
func (d *decoder) fail(format string, args ...any) {
	d.failKind(ErrBytecode, format, args...)
}

func (d *decoder) failKind(kind error, format string, args ...any) {
	if d.err == nil {
		d.err = &Error{Kind: kind, Section: d.sec, Off: d.pos, Msg: fmt.Sprintf(format, args...)}
	}
}

// need reports whether n more bytes are there, recording an error if not.
func (d *decoder) need(n uint64) bool {
	if d.err != nil {
		return false
	}
	if d.pos > d.end || n > uint64(d.left()) {
		d.fail("%d bytes needed, %d left", n, d.left())
		return false
	}
	return true
}

func (d *decoder) byte() byte {
	if !d.need(1) {
		return 0
	}
	c := d.in[d.pos]
	d.pos++
	return c
}

func (d *decoder) bytes(n uint64) []byte {
	if !d.need(n) {
		return nil
	}
	b := d.in[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b
}

// varint reads a PrefixVarInt: the number of trailing zero bits of the first byte is the
// number of bytes that follow (eight when the first byte is zero).
func (d *decoder) varint() uint64 {
	first := d.byte()
	if d.err != nil {
		return 0
	}
	if first&1 == 1 {
		return uint64(first >> 1)
	}
	if first == 0 {
		b := d.bytes(8)
		if b == nil {
			return 0
		}
		return binary.LittleEndian.Uint64(b)
	}
	extra := bits.TrailingZeros8(first)
	b := d.bytes(uint64(extra))
	if b == nil {
		return 0
	}
	var buf [8]byte
	buf[0] = first
	copy(buf[1:], b)
	return binary.LittleEndian.Uint64(buf[:]) >> (extra + 1)
}

// svarint reads a zigzag-encoded signed varint.
func (d *decoder) svarint() int64 {
	v := d.varint()
	return int64(v>>1) ^ -int64(v&1)
}

// flagged reads a varint whose low bit is a flag.
func (d *decoder) flagged() (uint64, bool) {
	v := d.varint()
	return v >> 1, v&1 == 1
}

// count reads a varint count of items that take at least min bytes each, and fails if
// the rest of the input could not hold them.
func (d *decoder) count(min int, what string) int {
	n := d.varint()
	if d.err != nil {
		return 0
	}
	if min < 1 {
		min = 1
	}
	if n > uint64(d.left()/min) {
		d.fail("%s count %d exceeds the %d bytes left", what, n, d.left())
		return 0
	}
	return int(n)
}

// cstring reads a NUL-terminated string.
func (d *decoder) cstring() string {
	if d.err != nil {
		return ""
	}
	for i := d.pos; i < d.end; i++ {
		if d.in[i] == 0 {
			s := string(d.in[d.pos:i])
			d.pos = i + 1
			return s
		}
	}
	d.fail("string without a NUL terminator")
	return ""
}

// alignTo skips padding bytes (0xCB) up to an offset that is a multiple of align,
// counted from the start of the input (the writer aligns from the start of its output).
func (d *decoder) alignTo(align uint64) {
	if d.err != nil {
		return
	}
	if align == 0 || align&(align-1) != 0 {
		d.fail("alignment %d is not a power of two", align)
		return
	}
	if align > 1<<20 {
		d.failKind(ErrUnsupported, "alignment %d", align)
		return
	}
	for uint64(d.pos)%align != 0 {
		if c := d.byte(); d.err == nil && c != 0xCB {
			d.pos--
			d.fail("padding byte 0x%02X, want 0xCB", c)
			return
		}
		if d.err != nil {
			return
		}
	}
}

// section reads a section header and returns its id and a decoder for its contents.
func (d *decoder) section(sec string) (id byte, body *decoder) {
	idAndAlign := d.byte()
	n := d.varint()
	if idAndAlign&0x80 != 0 {
		d.alignTo(d.varint())
	}
	return idAndAlign & 0x7F, d.sub(n, sec)
}
