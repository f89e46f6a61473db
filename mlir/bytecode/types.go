package bytecode

import (
	"strconv"
)

// dynamicDim is ShapedType::kDynamic, the size of a dynamic dimension.
const dynamicDim = -1 << 63

// writeType prints a type as builtin/StableHLO MLIR text.
func writeType(b *textBuf, t typ) {
	if b.done() {
		return
	}
	switch t := t.(type) {
	case tInt:
		switch t.sign {
		case 1:
			b.WriteString("si")
		case 2:
			b.WriteString("ui")
		default:
			b.WriteString("i")
		}
		b.WriteString(strconv.Itoa(t.width))
	case tBool:
		b.WriteString("i1")
	case tFloat:
		b.WriteString(string(t))
	case tIndex:
		b.WriteString("index")
	case tNone:
		b.WriteString("none")
	case tToken:
		b.WriteString("!stablehlo.token")
	case tWitness:
		b.WriteString("!shape.witness")
	case tComplex:
		b.WriteString("complex<")
		writeType(b, t.elem)
		b.WriteByte('>')
	case tTensor:
		b.WriteString("tensor<")
		writeShape(b, t.shape)
		writeType(b, t.elem)
		if t.encoding != nil {
			b.WriteString(", ")
			writeEncoding(b, t.encoding)
		}
		b.WriteByte('>')
	case tBuffer:
		b.WriteString("memref<")
		writeShape(b, t.shape)
		writeType(b, t.elem)
		b.WriteByte('>')
	case tUnranked:
		b.WriteString("tensor<*x")
		writeType(b, t.elem)
		b.WriteByte('>')
	case tTuple:
		b.WriteString("tuple<")
		writeTypeList(b, t)
		b.WriteByte('>')
	case tFuture:
		b.WriteString("!stablehlo.future<")
		writeTypeList(b, t)
		b.WriteByte('>')
	case tFunc:
		writeFuncType(b, t.in, t.out)
	case tAsm:
		b.WriteString(string(t))
	default:
		b.WriteString("<<unknown type>>")
	}
}

func writeShape(b *textBuf, shape []int64) {
	for _, s := range shape {
		if b.done() {
			return
		}
		if s == dynamicDim || s < 0 {
			b.WriteByte('?')
		} else {
			b.WriteString(strconv.FormatInt(s, 10))
		}
		b.WriteByte('x')
	}
}

func writeTypeList(b *textBuf, ts []typ) {
	for i, t := range ts {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeType(b, t)
	}
}

// writeFuncType prints (a, b) -> c, with the results in parentheses unless there is
// exactly one that is not itself a function type.
func writeFuncType(b *textBuf, in, out []typ) {
	b.WriteByte('(')
	writeTypeList(b, in)
	b.WriteString(") -> ")
	if len(out) == 1 {
		if _, isFunc := out[0].(tFunc); !isFunc {
			writeType(b, out[0])
			return
		}
	}
	b.WriteByte('(')
	writeTypeList(b, out)
	b.WriteByte(')')
}

func writeEncoding(b *textBuf, a attr) {
	if e, ok := a.(aTypeExtensions); ok {
		b.WriteString("#stablehlo.bounds<")
		for i, v := range e.bounds {
			if b.done() {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			if v == dynamicDim || v < 0 {
				b.WriteByte('?')
			} else {
				b.WriteString(strconv.FormatInt(v, 10))
			}
		}
		b.WriteByte('>')
		return
	}
	if t, ok := a.(aAsm); ok {
		b.WriteString(string(t))
	}
}

// checkEncoding fails unless a is a tensor encoding the printer knows.
func checkEncoding(d *decoder, a attr) {
	switch a.(type) {
	case aTypeExtensions, aAsm:
	default:
		if d.err == nil {
			d.failKind(ErrUnsupported, "tensor encoding %T", a)
		}
	}
}
