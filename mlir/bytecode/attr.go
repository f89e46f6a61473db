package bytecode

import (
	"github.com/xlamesh/xlamesh/mlir"
)

// attr is a decoded attribute; typ a decoded type. Both come from the builtin and VHLO
// dialects' encodings, or are kept as the assembly text the writer fell back to.
type attr interface{}

type typ interface{}

// Attributes.
type (
	aArray  []attr
	aDict   []namedAttr
	aString struct {
		s   string
		typ typ // builtin StringAttr with a type; nil otherwise
	}
	aBool bool
	aInt  struct {
		typ typ
		v   uint64 // the value's bits, width from typ
	}
	aFloat struct {
		typ  typ
		bits uint64 // the IEEE (or other) encoding, width from typ
	}
	aTensor struct {
		typ  typ // tensor type
		data []byte
	}
	aEnum struct {
		kind enumKind
		v    uint64
	}
	aType   struct{ t typ }
	aUnit   struct{}
	aSymRef struct {
		root   string
		nested []string
	}
	aDenseArray struct {
		elem typ
		n    uint64
		data []byte
	}
	aDenseStrings struct {
		typ  typ
		strs []string
	}
	aResource struct {
		typ    typ
		handle *resourceHandle
	}
	aOutputOperandAlias struct {
		outputTupleIndices  []int64
		operandIndex        int64
		operandTupleIndices []int64
	}
	aResultAccuracy struct {
		atol, rtol uint64 // float64 bits
		ulps       int64
		mode       attr
	}
	aTypeExtensions struct{ bounds []int64 }
	aSubAxisInfo    struct{ preSize, size int64 }
	aAxisRef        struct{ name, subAxis attr }
	aMeshAxis       struct {
		name attr
		size int64
	}
	aMesh                 struct{ axes, deviceIDs attr }
	aReplicaGroupMeshAxes struct{ mesh, axes attr }
	aAsm                  string // an attribute of another dialect, as its assembly text
	aLoc                  struct{}
)

type namedAttr struct {
	name  attr
	value attr
}

type enumKind uint8

const (
	enumComparisonDirection enumKind = iota + 1
	enumComparisonType
	enumCustomCallAPIVersion
	enumFftType
	enumPrecision
	enumRngAlgorithm
	enumRngDistribution
	enumTranspose
	enumResultAccuracyMode
)

// Types.
type (
	tInt struct {
		width int
		sign  byte // 0 signless, 1 signed, 2 unsigned
	}
	tFloat   string // the builtin spelling: f32, bf16, f8E4M3FN, ...
	tIndex   struct{}
	tNone    struct{}
	tToken   struct{}
	tBool    struct{} // VHLO's boolean, i1
	tWitness struct{}
	tComplex struct{ elem typ }
	tTensor  struct {
		shape    []int64
		elem     typ
		encoding attr
	}
	tUnranked struct{ elem typ }
	tTuple    []typ
	tFunc     struct{ in, out []typ }
	tFuture   []typ
	tBuffer   struct {
		shape []int64
		elem  typ
	}
	tAsm string
)

// attrRef reads an attribute index and returns the attribute.
func (f *file) attrRef(d *decoder) attr {
	i := d.varint()
	if d.err != nil {
		return nil
	}
	return f.attrAt(d, i)
}

// typeRef reads a type index and returns the type.
func (f *file) typeRef(d *decoder) typ {
	i := d.varint()
	if d.err != nil {
		return nil
	}
	return f.typeAt(d, i)
}

func (f *file) attrAt(d *decoder, i uint64) attr {
	if d.err != nil {
		return nil
	}
	if i >= uint64(len(f.attrs)) {
		d.fail("attribute index %d out of range (%d attributes)", i, len(f.attrs))
		return nil
	}
	e := &f.attrs[i]
	if !f.enter(d, e, "attribute", i) {
		return e.attr
	}
	defer f.leave()
	ed := newDecoder(f.in, e.start, e.end, "attr")
	var a attr
	switch {
	case !e.custom:
		a = aAsm(ed.cstring())
	default:
		switch f.dialects[e.dialect].name {
		case "builtin":
			a = f.builtinAttr(ed)
		case "vhlo":
			a = f.vhloAttr(ed)
		case "sdy":
			a, e.size = f.sdyAttr(ed)
		default:
			ed.failKind(ErrUnsupported, "attribute of dialect %q in its own encoding", f.dialects[e.dialect].name)
		}
	}
	if ed.err == nil && !ed.empty() {
		ed.fail("%d bytes after attribute %d", ed.left(), i)
	}
	return f.finish(d, ed, e, a, nil)
}

func (f *file) typeAt(d *decoder, i uint64) typ {
	if d.err != nil {
		return nil
	}
	if i >= uint64(len(f.types)) {
		d.fail("type index %d out of range (%d types)", i, len(f.types))
		return nil
	}
	e := &f.types[i]
	if !f.enter(d, e, "type", i) {
		return e.typ
	}
	defer f.leave()
	ed := newDecoder(f.in, e.start, e.end, "type")
	var t typ
	switch {
	case !e.custom:
		t = tAsm(ed.cstring())
	default:
		switch f.dialects[e.dialect].name {
		case "builtin":
			t = f.builtinType(ed)
		case "vhlo":
			t = f.vhloType(ed)
		default:
			ed.failKind(ErrUnsupported, "type of dialect %q in its own encoding", f.dialects[e.dialect].name)
		}
	}
	if ed.err == nil && !ed.empty() {
		ed.fail("%d bytes after type %d", ed.left(), i)
	}
	f.finish(d, ed, e, nil, t)
	return e.typ
}

// enter starts decoding entry e, or reports whether it is already decoded. A cycle
// (an entry that contains itself) and nesting deeper than mlir.MaxTypeDepth are errors.
func (f *file) enter(d *decoder, e *entry, what string, i uint64) bool {
	switch e.state {
	case 2:
		return false
	case 1:
		d.fail("%s %d contains itself", what, i)
		return false
	}
	if f.depth >= mlir.MaxTypeDepth {
		d.failKind(ErrUnsupported, "attributes and types nest deeper than %d", mlir.MaxTypeDepth)
		return false
	}
	f.depth++
	e.state = 1
	return true
}

func (f *file) leave() { f.depth-- }

func (f *file) finish(d, ed *decoder, e *entry, a attr, t typ) attr {
	if ed.err != nil {
		e.state = 0
		if d.err == nil {
			d.err = ed.err
		}
		return nil
	}
	e.state = 2
	e.attr, e.typ = a, t
	return a
}
