package lower

import (
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
)

// printer writes MLIR text with two-space indentation.
type printer struct {
	b      strings.Builder
	indent int
	// SSA names are assigned in print order, per func.func: %0, %1, ... for op results
	// and %arg0, %arg1, ... for block arguments.
	ids        map[*value]int
	nVal, nArg int
}

// reset starts the numbering of a new func.func.
func (p *printer) reset() {
	clear(p.ids)
	p.nVal, p.nArg = 0, 0
}

// defArg names a block argument and prints it with its type.
func (p *printer) defArg(v *value) {
	p.ids[v] = p.nArg
	p.nArg++
	p.val(v)
	p.b.WriteString(": ")
	v.shape.writeTo(&p.b)
}

func (p *printer) line() {
	for range p.indent {
		p.b.WriteString("  ")
	}
}

func (p *printer) str(s string) { p.b.WriteString(s) }

func (p *printer) val(v *value) {
	if v.arg {
		p.b.WriteString("%arg")
	} else {
		p.b.WriteByte('%')
	}
	p.b.WriteString(strconv.Itoa(p.ids[v]))
	if v.sub >= 0 {
		p.b.WriteByte('#')
		p.b.WriteString(strconv.Itoa(v.sub))
	}
}

func (p *printer) vals(vs []*value) {
	for i, v := range vs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.val(v)
	}
}

func (p *printer) types(vs []*value) {
	for i, v := range vs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		v.shape.writeTo(&p.b)
	}
}

// resultTypes prints "T" for one result and "(T, U)" otherwise.
func (p *printer) resultTypes(vs []*value) {
	if len(vs) == 1 {
		vs[0].shape.writeTo(&p.b)
		return
	}
	p.b.WriteByte('(')
	p.types(vs)
	p.b.WriteByte(')')
}

// fnType prints "(A, B) -> R".
func (p *printer) fnType(ins, outs []*value) {
	p.b.WriteByte('(')
	p.types(ins)
	p.b.WriteString(") -> ")
	p.resultTypes(outs)
}

// lhs prints "%N = " or "%N:k = " for an op's results.
func (p *printer) lhs(o *op) {
	if len(o.results) == 0 {
		return
	}
	id := p.nVal
	p.nVal++
	for _, r := range o.results {
		p.ids[r] = id
	}
	p.b.WriteByte('%')
	p.b.WriteString(strconv.Itoa(id))
	if len(o.results) > 1 {
		p.b.WriteByte(':')
		p.b.WriteString(strconv.Itoa(len(o.results)))
	}
	p.b.WriteString(" = ")
}

func (m *Module) print() string {
	p := &printer{ids: make(map[*value]int)}
	n := 0
	for _, f := range m.funcs {
		n += len(f.ops)
	}
	p.b.Grow(256 + 128*n)
	p.str("module ")
	if m.name != "" {
		p.str(mlir.Symbol(m.name))
		p.str(" ")
	}
	p.str("attributes {mhlo.num_partitions = ")
	p.str(strconv.Itoa(m.numPartitions()))
	p.str(" : i32, mhlo.num_replicas = 1 : i32} {\n")
	p.indent++
	if m.cfg.partitioner == Shardy {
		for _, s := range m.meshes {
			p.line()
			p.str("sdy.mesh @")
			p.str(s.name)
			p.str(" = ")
			p.str(s.text)
			p.str("\n")
		}
	}
	if m.main != nil {
		m.main.print(p)
	}
	for _, f := range m.funcs {
		if f != m.main {
			f.print(p)
		}
	}
	p.indent--
	p.str("}\n")
	return p.b.String()
}

func (f *Function) print(p *printer) {
	p.reset()
	p.line()
	p.str("func.func ")
	if f.public {
		p.str("public ")
	} else {
		p.str("private ")
	}
	p.str(mlir.Symbol(f.name))
	p.str("(")
	for i, a := range f.args {
		if i > 0 {
			p.str(", ")
		}
		p.defArg(a)
		if f.argAttrs[i] != "" {
			p.str(" {")
			p.str(f.argAttrs[i])
			p.str("}")
		}
	}
	p.str(")")
	if len(f.results) > 0 {
		p.str(" -> (")
		for i, r := range f.results {
			if i > 0 {
				p.str(", ")
			}
			r.shape.writeTo(&p.b)
			if f.resAttrs[i] != "" {
				p.str(" {")
				p.str(f.resAttrs[i])
				p.str("}")
			}
		}
		p.str(")")
	}
	p.str(" {\n")
	p.indent++
	f.printOps(p)
	p.line()
	p.str("return")
	if len(f.results) > 0 {
		p.str(" ")
		p.vals(f.results)
		p.str(" : ")
		p.types(f.results)
	}
	p.str("\n")
	p.indent--
	p.line()
	p.str("}\n")
}

func (f *Function) printOps(p *printer) {
	for _, o := range f.ops {
		if o.print != nil {
			o.print(p, o)
			continue
		}
		p.line()
		printGeneric(p, o)
		p.str("\n")
	}
}

// printGeneric writes `%r = "name"(%a, %b) <{props}> ({regions}) {attrs} : (A, B) -> R`.
func printGeneric(p *printer, o *op) {
	p.lhs(o)
	p.str(`"`)
	p.str(o.name)
	p.str(`"(`)
	p.vals(o.operands)
	p.str(")")
	if o.props != "" {
		p.str(" <{")
		p.str(o.props)
		p.str("}>")
	}
	if len(o.regions) > 0 {
		p.str(" (")
		for i, r := range o.regions {
			if i > 0 {
				p.str(", ")
			}
			r.printRegion(p, `"stablehlo.return"`)
		}
		p.str(")")
	}
	if o.attrs != "" {
		p.str(" {")
		p.str(o.attrs)
		p.str("}")
	}
	p.str(" : ")
	if len(o.results) == 0 {
		p.str("(")
		p.types(o.operands)
		p.str(") -> ()")
		return
	}
	p.fnType(o.operands, o.results)
}

// printRegion writes a region with an entry block `^bb0(%arg: T, ...):` and a generic
// terminator named term (e.g. "stablehlo.return").
func (f *Function) printRegion(p *printer, term string) {
	p.str("{\n")
	p.line()
	p.str("^bb0(")
	for i, a := range f.args {
		if i > 0 {
			p.str(", ")
		}
		p.defArg(a)
	}
	p.str("):\n")
	p.indent++
	f.printOps(p)
	p.line()
	p.str(term)
	p.str("(")
	p.vals(f.results)
	p.str(") : (")
	p.types(f.results)
	p.str(") -> ()\n")
	p.indent--
	p.line()
	p.str("}")
}

func printCall(p *printer, o *op) {
	p.line()
	p.lhs(o)
	p.str("func.call ")
	p.str(mlir.Symbol(o.data.(string)))
	p.str("(")
	p.vals(o.operands)
	p.str(") : (")
	p.types(o.operands)
	p.str(") -> ")
	p.resultTypes(o.results)
	p.str("\n")
}

// i64Array formats array<i64: 1, 2> (array<i64> when empty).
func i64Array(xs []int) string {
	var b strings.Builder
	b.WriteString("array<i64")
	for i, x := range xs {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	b.WriteString(">")
	return b.String()
}

// intList formats [1, 2].
func intList(xs []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	b.WriteByte(']')
	return b.String()
}
