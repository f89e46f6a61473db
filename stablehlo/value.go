package stablehlo

import "strconv"

// Value is an SSA value: a tensor of a known Shape defined in one Function (an op result, a
// function argument or a region's block argument). The zero Value is invalid; ops return it
// after an error.
type Value struct{ v *value }

type value struct {
	fn    *Function
	shape Shape
	id    int  // SSA number
	arg   bool // printed %argN
	sub   int  // result index for multi-result ops, -1 otherwise
	weak  *weakConst
}

// Valid reports whether v is a real value (not the zero Value returned after an error).
func (v Value) Valid() bool { return v.v != nil }

// Shape returns the value's tensor type. A weak constant (see Function.Constant) reports
// its default type.
func (v Value) Shape() Shape {
	if v.v == nil {
		return Shape{}
	}
	return v.v.shape
}

// DType is shorthand for v.Shape().DType().
func (v Value) DType() DType { return v.Shape().DType() }

// Function returns the function or region body that defines v (nil for the zero Value).
func (v Value) Function() *Function {
	if v.v == nil {
		return nil
	}
	return v.v.fn
}

// IsWeak reports whether v is a weak constant (see Function.Constant): a Go scalar not yet
// given a type, materialized as a constant op by the op that uses it.
func (v Value) IsWeak() bool { return v.v != nil && v.v.weak != nil }

// String returns the value's SSA name in creation order, e.g. "%arg0" or "%3" ("<invalid>"
// for the zero Value); errors use it. The printed module renumbers values in text order.
func (v Value) String() string {
	if v.v == nil {
		return "<invalid>"
	}
	return v.v.name()
}

func (v *value) name() string {
	if v.weak != nil {
		return "<constant " + v.weak.text() + ">"
	}
	var b []byte
	if v.arg {
		b = append(b, "%arg"...)
	} else {
		b = append(b, '%')
	}
	b = strconv.AppendInt(b, int64(v.id), 10)
	if v.sub >= 0 {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(v.sub), 10)
	}
	return string(b)
}

func wrapValues(vs []*value) []Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = Value{v}
	}
	return out
}

func unwrapValues(vs []Value) []*value {
	out := make([]*value, len(vs))
	for i, v := range vs {
		out[i] = v.v
	}
	return out
}
