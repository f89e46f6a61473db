package stablehlo

import (
	"slices"
	"strings"
)

// DotDims are the dimension numbers of DotGeneral, and the parameters of stablehlo.dot_general.
type DotDims struct {
	LhsBatch, RhsBatch             []int // batch dimensions, paired in order
	LhsContracting, RhsContracting []int // contracted dimensions, paired in order
}

// Properties returns "dot_dimension_numbers = #stablehlo.dot<...>".
func (d DotDims) Properties() string {
	var p strings.Builder
	p.WriteString("dot_dimension_numbers = #stablehlo.dot<")
	sep := ""
	for _, fld := range []struct {
		name string
		xs   []int
	}{{"lhs_batching_dimensions", d.LhsBatch}, {"rhs_batching_dimensions", d.RhsBatch},
		{"lhs_contracting_dimensions", d.LhsContracting}, {"rhs_contracting_dimensions", d.RhsContracting}} {
		if len(fld.xs) == 0 {
			continue
		}
		p.WriteString(sep)
		p.WriteString(fld.name)
		p.WriteString(" = ")
		p.WriteString(IntList(fld.xs))
		sep = ", "
	}
	p.WriteString(">")
	return p.String()
}

func (d DotDims) clone() DotDims {
	return DotDims{LhsBatch: slices.Clone(d.LhsBatch), RhsBatch: slices.Clone(d.RhsBatch),
		LhsContracting: slices.Clone(d.LhsContracting), RhsContracting: slices.Clone(d.RhsContracting)}
}

// DotGeneral contracts lhs and rhs (Params: DotDims). The result dimensions are the batch dimensions, then
// lhs's free dimensions, then rhs's free dimensions, each in order.
func (f *Function) DotGeneral(lhs, rhs Value, d DotDims) Value {
	const opName = "dot_general"
	vs, ok := f.check(opName, lhs, rhs)
	if !ok {
		return Value{}
	}
	a, b := vs[0], vs[1]
	if a.shape.DType() != b.shape.DType() {
		f.failf(opName, 1, b, ErrDType, "operand types differ: %v vs %v", a.shape, b.shape)
		return Value{}
	}
	if len(d.LhsBatch) != len(d.RhsBatch) || len(d.LhsContracting) != len(d.RhsContracting) {
		f.failf(opName, -1, nil, ErrShape, "batch %v x %v or contracting %v x %v dimension lists differ in length", d.LhsBatch, d.RhsBatch, d.LhsContracting, d.RhsContracting)
		return Value{}
	}
	usedA := make([]bool, a.shape.Rank())
	usedB := make([]bool, b.shape.Rank())
	pairs := func(xs, ys []int, kind string) bool {
		for i := range xs {
			x, y := xs[i], ys[i]
			if x < 0 || x >= len(usedA) || usedA[x] {
				f.failf(opName, 0, a, ErrShape, "%s dimension %d out of range or repeated for %v", kind, x, a.shape)
				return false
			}
			if y < 0 || y >= len(usedB) || usedB[y] {
				f.failf(opName, 1, b, ErrShape, "%s dimension %d out of range or repeated for %v", kind, y, b.shape)
				return false
			}
			usedA[x], usedB[y] = true, true
			if a.shape.Dim(x) != b.shape.Dim(y) {
				f.failf(opName, 1, b, ErrShape, "%s dimension sizes differ: lhs dimension %d is %d, rhs dimension %d is %d", kind, x, a.shape.Dim(x), y, b.shape.Dim(y))
				return false
			}
		}
		return true
	}
	if !pairs(d.LhsBatch, d.RhsBatch, "batch") || !pairs(d.LhsContracting, d.RhsContracting, "contracting") {
		return Value{}
	}
	var dims []int
	for _, x := range d.LhsBatch {
		dims = append(dims, a.shape.Dim(x))
	}
	for i, u := range usedA {
		if !u {
			dims = append(dims, a.shape.Dim(i))
		}
	}
	for i, u := range usedB {
		if !u {
			dims = append(dims, b.shape.Dim(i))
		}
	}
	return f.emit("stablehlo.dot_general", []*value{a, b}, NewShape(a.shape.DType(), dims...), d.clone())
}
