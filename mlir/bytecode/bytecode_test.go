package bytecode

import (
	"errors"
	"strings"
	"testing"
)

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want uint64
	}{
		{[]byte{0x01}, 0},
		{[]byte{0x03}, 1},
		{[]byte{0xFF}, 127},
		{[]byte{0x02, 0x02}, 128},           // xxxxxx10: 14 bits over two bytes
		{[]byte{0xFE, 0xFF}, 1<<14 - 1},     // the largest two-byte value
		{[]byte{0x04, 0x00, 0x01}, 1 << 13}, // three bytes
		{[]byte{0x80, 0, 0, 0, 0, 0, 0, 0x01}, 1 << 48},
		{[]byte{0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 1<<64 - 1}, // nine bytes
	} {
		d := newDecoder(c.in, 0, len(c.in), "test")
		if got := d.varint(); got != c.want || d.err != nil || !d.empty() {
			t.Errorf("varint(% x) = %d, %v (left %d), want %d", c.in, got, d.err, d.left(), c.want)
		}
	}
	for _, c := range []struct {
		in   byte
		want int64
	}{{0x01, 0}, {0x03, -1}, {0x05, 1}, {0x07, -2}, {0xFF, -64}} {
		d := newDecoder([]byte{c.in}, 0, 1, "test")
		if got := d.svarint(); got != c.want {
			t.Errorf("svarint(%#x) = %d, want %d", c.in, got, c.want)
		}
	}
	// Truncated encodings are errors at the offset where bytes ran out.
	for _, in := range [][]byte{{}, {0x02}, {0x00, 1, 2, 3}, {0x08, 1}} {
		d := newDecoder(in, 0, len(in), "test")
		d.varint()
		var e *Error
		if !errors.As(d.err, &e) || !errors.Is(d.err, ErrBytecode) || e.Off > len(in) || e.Section != "test" {
			t.Errorf("varint(% x): error %v", in, d.err)
		}
	}
}

// enc writes the primitives of the format, for hand-made inputs.
type enc []byte

func (e *enc) varint(v uint64) *enc {
	switch {
	case v < 1<<7:
		*e = append(*e, byte(v<<1|1))
	case v < 1<<14:
		*e = append(*e, byte(v<<2|2), byte(v>>6))
	default:
		panic("test encoder: value too large")
	}
	return e
}

func (e *enc) flagged(v uint64, flag bool) *enc {
	f := uint64(0)
	if flag {
		f = 1
	}
	return e.varint(v<<1 | f)
}

func (e *enc) raw(b ...byte) *enc { *e = append(*e, b...); return e }

func (e *enc) section(id byte, body enc) *enc {
	*e = append(*e, id)
	e.varint(uint64(len(body)))
	*e = append(*e, body...)
	return e
}

// module builds, by hand, the bytecode of
//
//	module @m { vhlo.func_v1 @main(%a: tensor<2xf32>) -> tensor<2xf32> { add(%a, %a); return } }
//
// edit may change the parts before they are put together.
func module(edit func(p *parts)) []byte {
	p := &parts{
		strs: []string{"builtin", "vhlo", "module", "func_v1", "add_v1", "return_v1", "m", "main", ""},
		attrs: [][]byte{
			{0x05, 0x0D}, // a0 builtin StringAttr (code 2), string 6 "m"
			{0x1F},       // a1 builtin UnknownLoc (code 15)
			{0x03, 0x01}, // a2 vhlo array_v1 (code 1) of 0 elements
			{0x23, 0x05}, // a3 vhlo type_v1 (code 17) of type 2
			{0x1D, 0x0F}, // a4 vhlo string_v1 (code 14), string 7 "main"
			{0x1D, 0x11}, // a5 vhlo string_v1, string 8 ""
		},
		types: [][]byte{
			{0x09},                         // t0 vhlo f32 (code 4)
			{0x29, 0x03, 0x09, 0x01},       // t1 vhlo tensor (code 20): 1 dim, svarint 2, type 0
			{0x11, 0x03, 0x03, 0x03, 0x03}, // t2 vhlo function (code 8): 1 input t1, 1 output t1
		},
		funcProps: enc{0x05, 0x07, 0x05, 0x09, 0x0B}, // arg_attrs a2, function_type a3, res_attrs a2, sym_name a4, sym_visibility a5
		body: func(e *enc) {
			e.varint(1).varint(2)                                                             // one block; two values (the argument and the sum)
			e.flagged(2, true)                                                                // two ops, with arguments
			e.varint(1).flagged(1, false).raw(0)                                              // one argument of type 1, no location; no use lists
			e.varint(2).raw(0x06).varint(1).varint(1).varint(1).varint(2).varint(0).varint(0) // add_v1(v0, v0) -> t1
			e.varint(3).raw(0x04).varint(1).varint(1).varint(1)                               // return_v1(v1)
		},
	}
	if edit != nil {
		edit(p)
	}
	var strs, lens enc
	lens.varint(uint64(len(p.strs)))
	for i := len(p.strs) - 1; i >= 0; i-- {
		lens.varint(uint64(len(p.strs[i]) + 1))
	}
	for _, s := range p.strs {
		strs = append(append(strs, s...), 0)
	}
	var dialects enc
	dialects.varint(2).flagged(0, false).flagged(1, false) // builtin, vhlo: no versions
	dialects.varint(4)                                     // four op names
	dialects.varint(0).varint(1).flagged(2, true)          // builtin: module
	dialects.varint(1).varint(3).flagged(3, true).flagged(4, true).flagged(5, true)
	var data, offsets enc
	offsets.varint(uint64(len(p.attrs))).varint(uint64(len(p.types)))
	offsets.varint(0).varint(2) // builtin: a0, a1
	for i, a := range p.attrs {
		if i == 2 {
			offsets.varint(1).varint(uint64(len(p.attrs) - 2)) // vhlo: the rest
		}
		data = append(data, a...)
		offsets.flagged(uint64(len(a)), true)
	}
	offsets.varint(1).varint(uint64(len(p.types)))
	for _, t := range p.types {
		data = append(data, t...)
		offsets.flagged(uint64(len(t)), true)
	}
	var props enc
	props.varint(2)
	props.varint(2).raw(0x03, 0x01) // module: sym_name a0, no sym_visibility
	props.varint(uint64(len(p.funcProps))).raw(p.funcProps...)
	var fn enc
	p.body(&fn)
	var modRegion enc
	modRegion.varint(1).varint(0).flagged(1, false) // one block, no values, one op
	modRegion.varint(1).raw(0x50).varint(1).varint(1).flagged(1, true).section(secIR, fn)
	var ir enc
	if p.noTopOp {
		ir.flagged(0, false)
	} else {
		ir.flagged(1, false)
		ir.varint(0).raw(0x50).varint(1).varint(0).flagged(1, true).section(secIR, modRegion)
	}
	ir = append(ir, p.irTrailing...)
	var out enc
	out.raw([]byte(magic)...).varint(6).raw('t', 0)
	if p.strSection != nil {
		lens, strs = p.strSection, nil
	}
	out.section(secString, append(lens, strs...))
	out.section(secDialect, dialects)
	out.section(secAttrType, data)
	out.section(secAttrTypeOffset, offsets)
	out.section(secIR, ir)
	out.section(secProperties, props)
	return out
}

type parts struct {
	strs      []string
	attrs     [][]byte
	types     [][]byte
	funcProps enc
	body      func(*enc)
	// strSection, when set, replaces the whole string section.
	strSection enc
	// noTopOp leaves the IR section without its top-level op; irTrailing is appended to it.
	noTopOp    bool
	irTrailing []byte
}

const handModule = `module @m {
  func.func @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>) {
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }
}
`

func TestHandMadeModule(t *testing.T) {
	b := module(nil)
	info, err := ReadInfo(b)
	if err != nil || info != (Info{Version: 6, Producer: "t"}) {
		t.Fatalf("ReadInfo = %+v, %v", info, err)
	}
	got, err := ToText(b)
	if err != nil {
		t.Fatal(err)
	}
	if got != handModule {
		t.Errorf("got\n%s\nwant\n%s", got, handModule)
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      []byte
		kind    error
		section string
		msg     string
	}{
		{"not bytecode", []byte("module {}"), ErrBytecode, "header", "magic"},
		{"future version", append([]byte(magic), 0x0F, 0), ErrUnsupported, "header", "version 7"},
		{"no sections", append([]byte(magic), 0x0D, 0), ErrBytecode, "header", "no string section"},
		{"operand out of range", module(func(p *parts) {
			p.body = func(e *enc) {
				e.varint(1).varint(2).flagged(2, true).varint(1).flagged(1, false).raw(0)
				e.varint(2).raw(0x06).varint(1).varint(1).varint(1).varint(2).varint(0).varint(7)
				e.varint(3).raw(0x04).varint(1).varint(1).varint(1)
			}
		}), ErrBytecode, "ir", "value index 7 out of range"},
		{"type contains itself", module(func(p *parts) {
			p.types[2] = []byte{0x11, 0x03, 0x05, 0x03, 0x03} // function type whose input is itself
		}), ErrBytecode, "type", "contains itself"},
		{"unknown VHLO type", module(func(p *parts) { p.types[0] = []byte{0x7F} }), ErrUnsupported, "type", "VHLO type code 63"},
		{"unknown VHLO op", module(func(p *parts) { p.strs[4] = "frobnicate_v1" }), ErrUnsupported, "ir", "frobnicate_v1"},
		{"string past its section", module(func(p *parts) { p.attrs[4] = []byte{0x1D, 0x7F} }), ErrBytecode, "attr", "string index 63"},
		{"trailing bytes in an attribute", module(func(p *parts) { p.attrs[4] = []byte{0x1D, 0x0F, 0x01} }), ErrBytecode, "attr", "1 bytes after attribute 4"},
		{"properties too short", module(func(p *parts) { p.funcProps = p.funcProps[:3] }), ErrBytecode, "properties", "bytes needed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ToText(c.in)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want %v", err, c.kind)
			}
			if c.section != "" && e.Section != c.section {
				t.Errorf("section %q, want %q (%v)", e.Section, c.section, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q lacks %q", err, c.msg)
			}
			if e.Off > len(c.in) {
				t.Errorf("offset %d past the input's %d bytes", e.Off, len(c.in))
			}
		})
	}
}

// TestTruncated cuts a real artifact at every length: each prefix gives an error, never a
// panic.
func TestTruncated(t *testing.T) {
	full := seedArtifacts(t)[0]
	if _, err := ToText(full); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(full); n++ {
		_, err := ToText(full[:n])
		if !errors.Is(err, ErrBytecode) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("prefix of %d bytes: %v", n, err)
		}
	}
}

// TestBitFlips flips each bit of a small artifact: the reader fails or converts, and never
// panics.
func TestBitFlips(t *testing.T) {
	full := module(nil)
	for i := range full {
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), full...)
			b[i] ^= 1 << bit
			if _, err := ToText(b); err != nil && !errors.Is(err, ErrBytecode) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("byte %d bit %d: %v", i, bit, err)
			}
		}
	}
}

func TestFloatText(t *testing.T) {
	for _, c := range []struct {
		t    string
		bits uint64
		want string
	}{
		{"f32", 0x3F800000, "1.0e+00"},
		{"f32", 0x3DCCCCCD, "1.0000000149011612e-01"}, // float32(0.1), exactly
		{"f32", 0x80000000, "-0.0e+00"},
		{"f32", 0x7FC00000, "0x7FC00000"},
		{"f32", 0xFF800000, "0xFF800000"},
		{"bf16", 0x3FC0, "1.5e+00"},
		{"f16", 0x7BFF, "6.5504e+04"},
		{"f16", 0x0001, "5.960464477539063e-08"},
		{"f64", 0x3FB999999999999A, "1.0e-01"},
		{"f8E4M3FN", 0x38, "0x38"},
	} {
		if got := floatText(tFloat(c.t), c.bits); got != c.want {
			t.Errorf("floatText(%s, %#x) = %s, want %s", c.t, c.bits, got, c.want)
		}
	}
}
