package refine

import (
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
)

// print writes the module in the generic form it was read in.
func (m *module) print() string {
	var b strings.Builder
	b.WriteString(m.head)
	for _, piece := range m.pieces {
		switch x := piece.(type) {
		case string:
			b.WriteString("  " + x + "\n")
		case *function:
			x.print(&b)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func writeArgs(b *strings.Builder, args []arg, names bool) {
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		if names {
			b.WriteString(a.name + ": ")
		}
		b.WriteString(a.t.String())
		if a.attrs != "" {
			b.WriteString(" " + a.attrs)
		}
	}
	b.WriteByte(')')
}

func (f *function) print(b *strings.Builder) {
	b.WriteString("  func.func ")
	if f.visibility != "" {
		b.WriteString(f.visibility + " ")
	}
	b.WriteString(mlir.Symbol(f.name))
	writeArgs(b, f.args, true)
	if len(f.results) > 0 {
		b.WriteString(" -> ")
		writeArgs(b, f.results, false)
	}
	b.WriteString(" {\n")
	for _, o := range f.body.ops {
		o.print(b, 2)
	}
	b.WriteString("  }\n")
}

func indent(b *strings.Builder, depth int) { b.WriteString(strings.Repeat("  ", depth)) }

func writeTypes(b *strings.Builder, ts []typ) {
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
}

func (o *op) print(b *strings.Builder, depth int) {
	for _, p := range o.pre {
		p.print(b, depth)
	}
	indent(b, depth)
	if len(o.results) > 0 {
		b.WriteString(strings.Join(o.results, ", ") + " = ")
	}
	b.WriteString(mlir.Quote(o.name) + "(" + strings.Join(o.operands, ", ") + ")")
	if o.props != "" {
		b.WriteString(" <{" + o.props + "}>")
	}
	if len(o.regions) > 0 {
		b.WriteString(" (")
		for i, r := range o.regions {
			if i > 0 {
				b.WriteString(", ")
			}
			r.print(b, depth)
		}
		b.WriteString(")")
	}
	if o.attrs != "" {
		b.WriteString(" {" + o.attrs + "}")
	}
	b.WriteString(" : (")
	writeTypes(b, o.ins)
	b.WriteString(") -> ")
	if len(o.outs) == 1 {
		b.WriteString(o.outs[0].String())
	} else {
		b.WriteString("(")
		writeTypes(b, o.outs)
		b.WriteString(")")
	}
	b.WriteString("\n")
}

func (r *region) print(b *strings.Builder, depth int) {
	b.WriteString("{\n")
	if r.label != "" {
		indent(b, depth)
		b.WriteString(r.label)
		writeArgs(b, r.args, true)
		b.WriteString(":\n")
	}
	for _, o := range r.ops {
		o.print(b, depth+1)
	}
	indent(b, depth)
	b.WriteString("}")
}
