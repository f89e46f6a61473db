package bytecode

// Builtin dialect encodings (mlir/IR/BuiltinDialectBytecode.td): a varint code, then the
// fields of that attribute or type.

const (
	bArray = iota
	bDictionary
	bString
	bStringWithType
	bFlatSymbolRef
	bSymbolRef
	bTypeAttr
	bUnit
	bInteger
	bFloat
	bCallSiteLoc
	bFileLineColLoc
	bFusedLoc
	bFusedLocWithMetadata
	bNameLoc
	bUnknownLoc
	bDenseResourceElements
	bDenseArray
	bDenseIntOrFPElements
	bDenseStringElements
	bSparseElements
	bDistinct
)

const (
	btInteger = iota
	btIndex
	btFunction
	btBF16
	btF16
	btF32
	btF64
	btF80
	btF128
	btComplex
	btMemRef
	btMemRefWithMemSpace
	btNone
	btRankedTensor
	btRankedTensorWithEncoding
	btTuple
	btUnrankedMemRef
	btUnrankedMemRefWithMemSpace
	btUnrankedTensor
	btVector
	btVectorScalable
)

func (f *file) builtinAttr(d *decoder) attr {
	code := d.varint()
	if d.err != nil {
		return nil
	}
	switch code {
	case bArray:
		return aArray(f.attrList(d))
	case bDictionary:
		n := d.count(1, "named attribute")
		dict := make(aDict, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			name := f.attrRef(d)
			dict = append(dict, namedAttr{name, f.attrRef(d)})
		}
		return dict
	case bString:
		return aString{s: f.str(d)}
	case bStringWithType:
		s := f.str(d)
		return aString{s: s, typ: f.typeRef(d)}
	case bFlatSymbolRef:
		return aSymRef{root: f.stringAttr(d)}
	case bSymbolRef:
		root := f.stringAttr(d)
		n := d.count(1, "nested reference")
		var nested []string
		for i := 0; i < n && d.err == nil; i++ {
			a, ok := f.attrRef(d).(aSymRef)
			if !ok && d.err == nil {
				d.fail("nested symbol reference is not a flat symbol reference")
			}
			nested = append(nested, a.root)
		}
		return aSymRef{root: root, nested: nested}
	case bTypeAttr:
		return aType{f.typeRef(d)}
	case bUnit:
		return aUnit{}
	case bInteger:
		t := f.typeRef(d)
		return aInt{typ: t, v: f.apint(d, intWidth(d, t))}
	case bFloat:
		t := f.typeRef(d)
		return aFloat{typ: t, bits: f.apint(d, floatWidth(d, t))}
	case bDenseResourceElements:
		t := f.typeRef(d)
		h := d.varint()
		if d.err == nil && h >= uint64(len(f.handles)) {
			d.fail("resource handle %d out of range (%d resources)", h, len(f.handles))
		}
		if d.err != nil {
			return nil
		}
		return aResource{typ: t, handle: &f.handles[h]}
	case bDenseArray:
		t := f.typeRef(d)
		n := d.varint()
		return aDenseArray{elem: t, n: n, data: f.blob(d)}
	case bDenseIntOrFPElements:
		t := f.typeRef(d)
		return aTensor{typ: t, data: f.blob(d)}
	case bDenseStringElements:
		t := f.typeRef(d)
		splat := d.varint()
		n := 1
		if splat == 0 {
			tt, ok := t.(tTensor)
			if !ok {
				d.failKind(ErrUnsupported, "dense string elements of a type other than a ranked tensor")
				return nil
			}
			c, ok := elementCount(tt.shape)
			if !ok || c > uint64(d.left()) {
				d.fail("dense string elements: %d elements exceed the %d bytes left", c, d.left())
				return nil
			}
			n = int(c)
		}
		strs := make([]string, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			strs = append(strs, f.str(d))
		}
		return aDenseStrings{typ: t, strs: strs}
	case bCallSiteLoc, bFileLineColLoc, bFusedLoc, bFusedLocWithMetadata, bNameLoc, bUnknownLoc:
		// Locations are never printed: skip the fields.
		d.pos = d.end
		return aLoc{}
	}
	d.failKind(ErrUnsupported, "builtin attribute code %d", code)
	return nil
}

func (f *file) builtinType(d *decoder) typ {
	code := d.varint()
	if d.err != nil {
		return nil
	}
	switch code {
	case btInteger:
		v := d.varint()
		if d.err == nil && (v>>2 == 0 || v>>2 > 1<<24 || v&3 == 3) {
			d.fail("integer type width %d, signedness %d", v>>2, v&3)
		}
		return tInt{width: int(v >> 2), sign: byte(v & 3)}
	case btIndex:
		return tIndex{}
	case btFunction:
		in := f.typeList(d)
		return tFunc{in: in, out: f.typeList(d)}
	case btBF16:
		return tFloat("bf16")
	case btF16:
		return tFloat("f16")
	case btF32:
		return tFloat("f32")
	case btF64:
		return tFloat("f64")
	case btF80:
		return tFloat("f80")
	case btF128:
		return tFloat("f128")
	case btComplex:
		return tComplex{f.typeRef(d)}
	case btNone:
		return tNone{}
	case btRankedTensor:
		shape := f.shape(d)
		return tTensor{shape: shape, elem: f.typeRef(d)}
	case btRankedTensorWithEncoding:
		enc := f.attrRef(d)
		checkEncoding(d, enc)
		shape := f.shape(d)
		return tTensor{shape: shape, elem: f.typeRef(d), encoding: enc}
	case btTuple:
		return tTuple(f.typeList(d))
	case btUnrankedTensor:
		return tUnranked{f.typeRef(d)}
	}
	d.failKind(ErrUnsupported, "builtin type code %d", code)
	return nil
}

// stringAttr reads an attribute reference that must be a string.
func (f *file) stringAttr(d *decoder) string {
	a := f.attrRef(d)
	s, ok := a.(aString)
	if !ok && d.err == nil {
		d.fail("expected a string attribute")
	}
	return s.s
}

func (f *file) attrList(d *decoder) []attr {
	n := d.count(1, "attribute")
	l := make([]attr, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		l = append(l, f.attrRef(d))
	}
	return l
}

func (f *file) typeList(d *decoder) []typ {
	n := d.count(1, "type")
	l := make([]typ, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		l = append(l, f.typeRef(d))
	}
	return l
}

func (f *file) shape(d *decoder) []int64 {
	n := d.count(1, "dimension")
	s := make([]int64, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		s = append(s, d.svarint())
	}
	return s
}

func (f *file) svarints(d *decoder) []int64 { return f.shape(d) }

// blob reads a varint size and that many bytes.
func (f *file) blob(d *decoder) []byte {
	return d.bytes(d.varint())
}

// apint reads an integer of a known bit width (readAPIntWithKnownWidth): one byte up to
// 8 bits, a signed varint up to 64; wider values are not supported here.
func (f *file) apint(d *decoder, width int) uint64 {
	if d.err != nil {
		return 0
	}
	switch {
	case width <= 0:
		d.fail("integer of width %d", width)
		return 0
	case width <= 8:
		return uint64(d.byte()) & mask(width)
	case width <= 64:
		return uint64(d.svarint()) & mask(width)
	}
	d.failKind(ErrUnsupported, "integer or float of %d bits", width)
	return 0
}

func mask(width int) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return 1<<width - 1
}

// intWidth is the storage width of an integer attribute's type.
func intWidth(d *decoder, t typ) int {
	switch t := t.(type) {
	case tInt:
		return t.width
	case tIndex:
		return 64
	case tBool:
		return 1
	}
	if d.err == nil {
		d.failKind(ErrUnsupported, "integer attribute of type %s", shortType(t))
	}
	return 0
}

// floatWidth is the bit width of a float type.
func floatWidth(d *decoder, t typ) int {
	if ft, ok := t.(tFloat); ok {
		if w := floatBits[string(ft)]; w > 0 {
			return w
		}
	}
	if d.err == nil {
		d.failKind(ErrUnsupported, "float attribute of type %s", shortType(t))
	}
	return 0
}

var floatBits = map[string]int{
	"bf16": 16, "f16": 16, "f32": 32, "f64": 64, "f80": 80, "f128": 128, "tf32": 19,
	"f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8, "f8E4M3B11FNUZ": 8,
	"f8E3M4": 8, "f8E4M3": 8, "f8E8M0FNU": 8, "f4E2M1FN": 4, "f6E2M3FN": 6, "f6E3M2FN": 6,
}

// elementCount multiplies the dimensions of a static shape; false on a dynamic or
// negative dimension or on overflow.
func elementCount(shape []int64) (uint64, bool) {
	n := uint64(1)
	for _, s := range shape {
		if s < 0 {
			return 0, false
		}
		if s != 0 && n > (1<<63)/uint64(s) {
			return 0, false
		}
		n *= uint64(s)
	}
	return n, true
}
