package bytecode

import (
	"errors"
	"strings"
	"testing"
)

// TestStringSectionOverlap is the regression test of readStrings comparing an unsigned
// size with a negative remainder: the lengths of the strings run into the bytes of the
// strings already read, the data left for the next string is negative, and it used to be
// converted to a huge unsigned number, accepted, and sliced (a panic).
//
// The section holds 2 strings: the length of string 1 as a nine-byte varint (9), then
// string 1 (9 bytes, which read as a varint are 200, NUL-terminated). String 1's data
// starts where the lengths end, so string 0's length is read from string 1's data.
func TestStringSectionOverlap(t *testing.T) {
	in := module(func(p *parts) {
		p.strSection = enc{0x05, 0x00, 9, 0, 0, 0, 0, 0, 0, 0, 0x00, 200, 0, 0, 0, 0, 0, 0, 0}
	})
	text, err := ToText(in)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrBytecode) || e.Section != "string" {
		t.Fatalf("ToText = %q, %v; want an ErrBytecode in the string section", text, err)
	}
	if !strings.Contains(err.Error(), "string 0 has size 200, more than the section holds") {
		t.Errorf("error %q", err)
	}
}

// TestStringSectionExact is the other side of the same comparison: lengths that end exactly
// where the data starts are read.
func TestStringSectionExact(t *testing.T) {
	var p *parts
	module(func(q *parts) { p = q })
	var lens, strs enc
	lens.varint(uint64(len(p.strs)))
	for i := len(p.strs) - 1; i >= 0; i-- {
		lens.varint(uint64(len(p.strs[i]) + 1))
	}
	for _, s := range p.strs {
		strs = append(append(strs, s...), 0)
	}
	in := module(func(q *parts) { q.strSection = append(lens, strs...) })
	if got, err := ToText(in); err != nil || got != handModule {
		t.Fatalf("ToText = %q, %v", got, err)
	}
	// One byte less of data: the first string's length now reaches into the lengths.
	short := append(append(enc{}, lens...), strs[1:]...)
	_, err := ToText(module(func(q *parts) { q.strSection = short }))
	if !errors.Is(err, ErrBytecode) {
		t.Fatalf("one byte short: %v", err)
	}
}

// TestDecoderPastEnd is the regression test of the decoder's remaining-bytes arithmetic:
// a position past the end (end-pos negative) leaves no bytes, and no read or count
// converts the negative difference to a huge unsigned number.
func TestDecoderPastEnd(t *testing.T) {
	in := []byte{0x03, 0x03, 0x03, 0x03}
	for _, c := range []struct {
		name string
		read func(d *decoder)
	}{
		{"byte", func(d *decoder) { d.byte() }},
		{"bytes", func(d *decoder) { d.bytes(1) }},
		{"varint", func(d *decoder) { d.varint() }},
		{"count", func(d *decoder) { d.count(1, "thing") }},
		{"sub", func(d *decoder) { d.sub(1, "x") }},
		{"cstring", func(d *decoder) { d.cstring() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDecoder(in, 3, 1, "test") // pos 3, end 1
			if d.left() != 0 || !d.empty() {
				t.Fatalf("left %d, empty %v; want 0, true", d.left(), d.empty())
			}
			c.read(d)
			if !errors.Is(d.err, ErrBytecode) {
				t.Fatalf("err %v, want ErrBytecode", d.err)
			}
		})
	}
	// A count read from a decoder with bytes left is checked against them.
	d := newDecoder([]byte{0x0B, 0, 0}, 0, 3, "test") // count 5, 2 bytes left
	if n := d.count(1, "thing"); n != 0 || !errors.Is(d.err, ErrBytecode) {
		t.Fatalf("count = %d, %v", n, d.err)
	}
}

// TestTopLevelOps is the regression test of readIR's count of top-level ops: a mutated
// artifact whose count was 0 read as an empty module, ToText returned "" and no error, and
// pjrt.Client.Compile then indexed the empty program (a panic). No top-level op, and bytes
// after the top-level ops, are errors.
func TestTopLevelOps(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(p *parts)
		msg  string
	}{
		{"no top-level op", func(p *parts) { p.noTopOp = true }, "no top-level op"},
		{"no top-level op, then bytes", func(p *parts) { p.noTopOp, p.irTrailing = true, []byte{0x50, 0x01} }, "no top-level op"},
		{"bytes after the module", func(p *parts) { p.irTrailing = []byte{0x01, 0x01} }, "2 bytes after the top-level ops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text, err := ToText(module(c.edit))
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrBytecode) || e.Section != "ir" || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("ToText = %q, %v; want an ErrBytecode in the ir section with %q", text, err, c.msg)
			}
		})
	}
}
