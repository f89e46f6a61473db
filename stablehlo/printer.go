package stablehlo

import (
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
)

// Printer writes a module's MLIR text. Build creates one; a custom PrintFunc receives it
// to write its op, one line (or several) each starting with Indent and ending in "\n":
//
//	func printConstraint(p *stablehlo.Printer, o *stablehlo.Op) {
//		p.Indent()
//		p.Def(o.Results()...)           // "%3 = "
//		p.WriteString("sdy.sharding_constraint ")
//		p.Value(o.Operands()[0])         // "%2"
//		...
//		p.WriteString("\n")
//	}
//
// SSA names are assigned in print order, per func.func: %0, %1, ... for op results (Def)
// and %arg0, %arg1, ... for block arguments (BlockArg), so a value must be defined before
// it is printed.
type Printer struct {
	b     strings.Builder
	depth int
	ids   map[*value]int
	nVal  int
	nArg  int
	m     *Module
	// outlined are the regions Call turned into private functions, printed after the
	// module's own functions; names holds every function name used so far.
	outlined []outline
	names    map[string]bool
	// aliases are the values printed as others' names (Alias).
	aliases map[*value]*value
}

// outline is a region printed as `func.func private @name`.
type outline struct {
	name string
	body *Function
}

// reset starts the numbering of a new func.func.
func (p *Printer) reset() {
	clear(p.ids)
	p.nVal, p.nArg = 0, 0
}

// WriteString writes s as it is.
func (p *Printer) WriteString(s string) { p.b.WriteString(s) }

// Indent writes the indentation of the current nesting depth (two spaces per level).
func (p *Printer) Indent() {
	for range p.depth {
		p.b.WriteString("  ")
	}
}

// Push nests one level deeper (an op's body); Pop returns.
func (p *Printer) Push() { p.depth++ }

// Pop undoes one Push.
func (p *Printer) Pop() { p.depth-- }

// Def names vs, the results of one op, with the next SSA number and writes "%N = " (one
// value) or "%N:k = " (k values, printed %N#0, ...); nothing for none.
func (p *Printer) Def(vs ...Value) { p.def(unwrapValues(vs)) }

// BlockArg names v as the next block argument and writes it with its type, "%arg0: T".
func (p *Printer) BlockArg(v Value) { p.defArg(v.v) }

// Value writes v's SSA name ("%3", "%arg0", "%2#1").
func (p *Printer) Value(v Value) { p.val(v.v) }

// Values writes vs separated by ", ".
func (p *Printer) Values(vs []Value) { p.vals(unwrapValues(vs)) }

// Type writes a tensor type, "tensor<8x2xf32>".
func (p *Printer) Type(s Shape) { s.WriteTensorType(&p.b) }

// Types writes the types of vs separated by ", ".
func (p *Printer) Types(vs []Value) { p.types(unwrapValues(vs)) }

// ResultTypes writes "T" for one value and "(T, U)" otherwise.
func (p *Printer) ResultTypes(vs []Value) { p.resultTypes(unwrapValues(vs)) }

// FuncType writes "(A, B) -> R" for inputs ins and results outs.
func (p *Printer) FuncType(ins, outs []Value) { p.fnType(unwrapValues(ins), unwrapValues(outs)) }

// Ops writes the ops of body g, one per line at the current depth.
func (p *Printer) Ops(g *Function) { g.printOps(p) }

// Region writes region body g as `{`, an entry block `^bb0(%arg: T, ...):`, its ops and the
// generic terminator `"term"(yields) : (T) -> ()`, then `}` without a newline.
func (p *Printer) Region(g *Function, term string) { g.printRegion(p, `"`+term+`"`) }

// CustomCall writes one line `results = stablehlo.custom_call @target(operands) {attrs} :
// (T) -> R`, defining results (see Def).
func (p *Printer) CustomCall(results []Value, target string, operands []Value, attrs ...Attr) {
	p.customCall(unwrapValues(results), target, unwrapValues(operands), attrs)
}

func (p *Printer) customCall(results []*value, target string, operands []*value, attrs []Attr) {
	p.Indent()
	p.def(results)
	p.b.WriteString("stablehlo.custom_call @")
	p.b.WriteString(target)
	p.b.WriteString("(")
	p.vals(operands)
	p.b.WriteString(")")
	if len(attrs) > 0 {
		p.b.WriteString(" ")
		p.attrDict(attrs)
	}
	p.b.WriteString(" : ")
	p.fnType(operands, results)
	p.b.WriteString("\n")
}

// Call writes `results = func.call @name(operands) : (T) -> R` (defining results, see Def)
// and prints region body g, made with NewRegion and ended with Yield, as the callee: a
// `func.func private @name` after the module's functions, whose arguments are g's block
// arguments and whose `return` gives g's results. The name is base, or base_1, base_2, ...
// when the module or an earlier Call uses it. lower's GSPMD shard_map prints its body this
// way, as JAX does: XLA keeps a called body apart from the code around it, where it would
// merge an inline body's constants with equal ones outside the manual region.
func (p *Printer) Call(results []Value, g *Function, base string, operands []Value) {
	if p.names == nil {
		p.names = make(map[string]bool)
		if p.m != nil {
			for _, f := range p.m.funcs {
				p.names[f.name] = true
			}
		}
	}
	name := base
	for i := 1; p.names[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	p.names[name] = true
	p.outlined = append(p.outlined, outline{name, g})
	rs := unwrapValues(results)
	p.Indent()
	p.def(rs)
	p.WriteString("func.call ")
	p.WriteString(mlir.Symbol(name))
	p.WriteString("(")
	p.vals(unwrapValues(operands))
	p.WriteString(") : ")
	p.fnType(unwrapValues(operands), rs)
	p.WriteString("\n")
}

// printOutlined writes region body g as `func.func private @name`, for Call.
func (p *Printer) printOutlined(name string, g *Function) {
	p.reset()
	p.Indent()
	p.WriteString("func.func private ")
	p.WriteString(mlir.Symbol(name))
	p.WriteString("(")
	p.defArgs(g.args)
	p.WriteString(") -> (")
	p.types(g.results)
	p.WriteString(") {\n")
	g.printBody(p)
}

// attrDict writes "{a = x, b = y}".
func (p *Printer) attrDict(as []Attr) {
	p.b.WriteByte('{')
	for i, a := range as {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(a.Name)
		p.b.WriteString(" = ")
		p.b.WriteString(a.Value)
	}
	p.b.WriteByte('}')
}

// defArgs prints block arguments with defArg, comma-separated.
func (p *Printer) defArgs(args []*value) {
	for i, a := range args {
		if i > 0 {
			p.WriteString(", ")
		}
		p.defArg(a)
	}
}

// defArg names a block argument and prints it with its type.
func (p *Printer) defArg(v *value) {
	p.ids[v] = p.nArg
	p.nArg++
	p.val(v)
	p.b.WriteString(": ")
	v.shape.WriteTensorType(&p.b)
}

// Alias makes v print as to from now on. An op whose PrintFunc writes a region's ops in
// place of the op itself uses it to name the region's arguments by the op's operands and
// the op's results by the values the region yields: lower's shard_map on a one-device mesh,
// written without an sdy.manual_computation as JAX writes it. to must be defined (or be
// aliased in turn) before v is printed.
func (p *Printer) Alias(v, to Value) {
	if p.aliases == nil {
		p.aliases = make(map[*value]*value)
	}
	if v.v != nil && to.v != nil && v.v != to.v {
		p.aliases[v.v] = to.v
	}
}

func (p *Printer) val(v *value) {
	for range len(p.aliases) {
		a, ok := p.aliases[v]
		if !ok {
			break
		}
		v = a
	}
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

func (p *Printer) vals(vs []*value) {
	for i, v := range vs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.val(v)
	}
}

func (p *Printer) types(vs []*value) {
	for i, v := range vs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		v.shape.WriteTensorType(&p.b)
	}
}

// resultTypes prints "T" for one result and "(T, U)" otherwise.
func (p *Printer) resultTypes(vs []*value) {
	if len(vs) == 1 {
		vs[0].shape.WriteTensorType(&p.b)
		return
	}
	p.b.WriteByte('(')
	p.types(vs)
	p.b.WriteByte(')')
}

// fnType prints "(A, B) -> R".
func (p *Printer) fnType(ins, outs []*value) {
	p.b.WriteByte('(')
	p.types(ins)
	p.b.WriteString(") -> ")
	p.resultTypes(outs)
}

// def prints "%N = " or "%N:k = " for the results of one op.
func (p *Printer) def(rs []*value) {
	if len(rs) == 0 {
		return
	}
	id := p.nVal
	p.nVal++
	for _, r := range rs {
		p.ids[r] = id
	}
	p.b.WriteByte('%')
	p.b.WriteString(strconv.Itoa(id))
	if len(rs) > 1 {
		p.b.WriteByte(':')
		p.b.WriteString(strconv.Itoa(len(rs)))
	}
	p.b.WriteString(" = ")
}

func (m *Module) print() string {
	p := &Printer{ids: make(map[*value]int), m: m}
	n := 0
	for _, f := range m.funcs {
		n += len(f.ops)
	}
	p.b.Grow(256 + 128*n)
	p.WriteString("module ")
	if m.name != "" {
		p.WriteString(mlir.Symbol(m.name))
		p.WriteString(" ")
	}
	if len(m.attrs) > 0 {
		p.WriteString("attributes ")
		p.attrDict(m.attrs)
		p.WriteString(" ")
	}
	p.WriteString("{\n")
	p.Push()
	for _, s := range m.preamble {
		p.Indent()
		p.WriteString(s)
		p.WriteString("\n")
	}
	if m.main != nil {
		m.main.print(p)
	}
	for _, f := range m.funcs {
		if f != m.main {
			f.print(p)
		}
	}
	// Bodies printed as calls (Call), including any called from another such body.
	for i := 0; i < len(p.outlined); i++ {
		p.printOutlined(p.outlined[i].name, p.outlined[i].body)
	}
	p.Pop()
	p.WriteString("}\n")
	return p.b.String()
}

func (f *Function) print(p *Printer) {
	p.reset()
	p.Indent()
	p.WriteString("func.func ")
	if f.public {
		p.WriteString("public ")
	} else {
		p.WriteString("private ")
	}
	p.WriteString(mlir.Symbol(f.name))
	p.WriteString("(")
	for i, a := range f.args {
		if i > 0 {
			p.WriteString(", ")
		}
		p.defArg(a)
		if len(f.argAttrs[i]) > 0 {
			p.WriteString(" ")
			p.attrDict(f.argAttrs[i])
		}
	}
	p.WriteString(")")
	if len(f.results) > 0 {
		p.WriteString(" -> (")
		for i, r := range f.results {
			if i > 0 {
				p.WriteString(", ")
			}
			r.shape.WriteTensorType(&p.b)
			if len(f.resAttrs[i]) > 0 {
				p.WriteString(" ")
				p.attrDict(f.resAttrs[i])
			}
		}
		p.WriteString(")")
	}
	p.WriteString(" {\n")
	f.printBody(p)
}

// printBody writes the body of func.func f, whose header ends in "{\n": its ops, the
// return of its results and the closing brace.
func (f *Function) printBody(p *Printer) {
	p.Push()
	f.printOps(p)
	p.Indent()
	p.WriteString("return")
	if len(f.results) > 0 {
		p.WriteString(" ")
		p.vals(f.results)
		p.WriteString(" : ")
		p.types(f.results)
	}
	p.WriteString("\n")
	p.Pop()
	p.Indent()
	p.WriteString("}\n")
}

func (f *Function) printOps(p *Printer) {
	for _, o := range f.ops {
		if o.print != nil {
			o.print(p, o)
			continue
		}
		p.Indent()
		printGeneric(p, o)
		p.WriteString("\n")
	}
}

// printGeneric writes `%r = "name"(%a, %b) <{props}> ({regions}) : (A, B) -> R`.
func printGeneric(p *Printer, o *Op) {
	p.def(o.results)
	p.WriteString(`"`)
	p.WriteString(o.name)
	p.WriteString(`"(`)
	p.vals(o.operands)
	p.WriteString(")")
	if pr, ok := o.params.(Properties); ok {
		if s := pr.Properties(); s != "" {
			p.WriteString(" <{")
			p.WriteString(s)
			p.WriteString("}>")
		}
	}
	if len(o.regions) > 0 {
		p.WriteString(" (")
		for i, r := range o.regions {
			if i > 0 {
				p.WriteString(", ")
			}
			r.printRegion(p, `"stablehlo.return"`)
		}
		p.WriteString(")")
	}
	p.WriteString(" : ")
	if len(o.results) == 0 {
		p.WriteString("(")
		p.types(o.operands)
		p.WriteString(") -> ()")
		return
	}
	p.fnType(o.operands, o.results)
}

// printRegion writes a region with an entry block `^bb0(%arg: T, ...):` and a generic
// terminator named term (quoted, e.g. `"stablehlo.return"`).
func (f *Function) printRegion(p *Printer, term string) {
	p.WriteString("{\n")
	p.Indent()
	p.WriteString("^bb0(")
	p.defArgs(f.args)
	p.WriteString("):\n")
	p.Push()
	f.printOps(p)
	p.Indent()
	p.WriteString(term)
	p.WriteString("(")
	p.vals(f.results)
	p.WriteString(") : (")
	p.types(f.results)
	p.WriteString(") -> ()\n")
	p.Pop()
	p.Indent()
	p.WriteString("}")
}

func printCall(p *Printer, o *Op) {
	p.Indent()
	p.def(o.results)
	p.WriteString("func.call ")
	c := o.params.(CallParams)
	p.WriteString(mlir.Symbol(c.Callee.name))
	p.WriteString("(")
	p.vals(o.operands)
	p.WriteString(")")
	if len(c.Attrs) > 0 {
		p.WriteString(" ")
		p.attrDict(c.Attrs)
	}
	p.WriteString(" : (")
	p.types(o.operands)
	p.WriteString(") -> ")
	p.resultTypes(o.results)
	p.WriteString("\n")
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

// IntList returns xs as MLIR prints a list of integers, "[1, 2]" ("[]" for none), for
// attribute text such as an Attr's Value.
func IntList(xs []int) string {
	return string(appendIntList(make([]byte, 0, 2+4*len(xs)), xs))
}

// appendIntList appends IntList(xs) to b without a string per number, so that printing the
// replica groups of N devices allocates O(1) times, not O(N) (issue 31).
func appendIntList(b []byte, xs []int) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// DenseI64 returns rows as a rank-2 i64 tensor attribute with its type, the form of
// replica_groups and source_target_pairs: "dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>". The
// rows should have equal lengths; no rows print as a 0x0 tensor.
func DenseI64(rows [][]int) string {
	n := 0
	for _, r := range rows {
		n += 4 + 4*len(r)
	}
	b := make([]byte, 0, n+32)
	b = append(b, "dense<["...)
	for i, r := range rows {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendIntList(b, r)
	}
	b = append(b, "]> : tensor<"...)
	b = strconv.AppendInt(b, int64(len(rows)), 10)
	b = append(b, 'x')
	if len(rows) > 0 {
		b = strconv.AppendInt(b, int64(len(rows[0])), 10)
	} else {
		b = append(b, '0')
	}
	b = append(b, "xi64>"...)
	return string(b)
}
