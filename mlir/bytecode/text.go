package bytecode

import (
	"fmt"
	"strconv"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shardy"
)

// ToText converts MLIR bytecode to MLIR text. Its input is a StableHLO portable artifact
// (the VHLO dialect, as jax.export's Exported.mlir_module_serialized holds it), possibly
// mixed with Shardy (sdy) ops and attributes; its output is StableHLO text that the XLA
// PJRT plugin compiles to the same program:
//
//   - the module and functions in their pretty forms (module @m attributes {...} {,
//     func.func public @main(%arg0: tensor<8x4xf32> {attrs}) -> (tensor<8x4xf32> {attrs}) {),
//     so tools that read a function's signature (wrap.Module) find it;
//   - every other op in MLIR's generic form, %0 = "stablehlo.add"(%arg0, %arg1) :
//     (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>, with the op's own
//     attributes in <{...}> and the others (mhlo.sharding, mhlo.frontend_attributes, ...)
//     in {...};
//   - VHLO names, types and attributes turned into their StableHLO, func and builtin
//     equivalents, as StableHLO's VHLO-to-StableHLO legalization does; Shardy attributes
//     (#sdy.sharding<...>) as MLIR prints them, by package shardy's printer (so a mesh's
//     device_ids equal to iota are dropped, as Shardy's MeshAttr builder drops them when
//     it reads the bytecode); attributes of other dialects that the bytecode stores as
//     text, as it stores them.
//
// Locations are not printed. Strings are quoted as mlir.Quote does. Errors are *Error
// values wrapping ErrBytecode or ErrUnsupported; no input makes ToText panic, allocate
// much more than the input's size, or run long.
func ToText(b []byte) (string, error) {
	f, top, err := parse(b)
	if err != nil {
		return "", err
	}
	p := &printer{f: f, names: map[int]string{}, types: map[int]typ{}}
	p.bud.left = outputLimit(len(b))
	p.b = p.buf()
	for _, o := range top.regions[0].blocks[0].ops {
		p.topOp(o)
	}
	if p.err == nil && p.bud.left == 0 {
		p.err = &Error{Kind: ErrUnsupported, Section: "ir", Off: -1, Msg: "the text would be longer than " + strconv.Itoa(outputLimit(len(b))) + " bytes"}
	}
	if p.err != nil {
		return "", p.err
	}
	return p.b.String(), nil
}

// outputLimit is the most text ToText writes for an input of n bytes: generous for real
// modules (dense constants grow about tenfold as decimal literals), linear in n.
func outputLimit(n int) int { return 128*n + 4<<20 }

// buf returns an empty buffer drawing on the conversion's budget.
func (p *printer) buf() *textBuf { return &textBuf{bud: &p.bud} }

// typeText prints a type, drawing on the budget.
func (p *printer) typeText(t typ) string {
	b := p.buf()
	writeType(b, t)
	return b.String()
}

// printer writes StableHLO text. The first error sticks.
type printer struct {
	f       *file
	b       *textBuf
	bud     budget
	names   map[int]string // value id -> SSA name (without %)
	types   map[int]typ    // value id -> type
	nextID  int            // next %N in the current function
	nextArg int            // next %argN in the current function
	err     error
}

func (p *printer) fail(o *op, kind error, format string, args ...any) {
	if p.err == nil {
		off := -1
		if o != nil {
			off = o.off
		}
		p.err = &Error{Kind: kind, Section: "ir", Off: off, Msg: fmt.Sprintf(format, args...)}
	}
}

func (p *printer) indent(depth int) {
	for i := 0; i < depth; i++ {
		p.b.WriteString("  ")
	}
}

func (p *printer) opName(o *op) string { return o.name.full(p.f) }

// props decodes the properties of o into named attributes, by what the reader knows of
// the op's definition.
func (p *printer) props(o *op) []nattr {
	if o.props != nil {
		d, ok := o.props.(aDict)
		if !ok {
			p.fail(o, ErrUnsupported, "properties of unregistered op %s are not a dictionary", p.opName(o))
			return nil
		}
		return p.named(o, d)
	}
	if o.propsRaw == nil {
		if p.f.version < versionNativeProperties {
			return p.inherentFromAttrs(o, true)
		}
		return nil
	}
	name := p.opName(o)
	var fields []propField
	switch dialect := p.f.dialects[o.name.dialect].name; dialect {
	case "vhlo":
		names, ok := vhloOpAttrs[o.name.name]
		if !ok {
			p.fail(o, ErrUnsupported, "VHLO op %s", name)
			return nil
		}
		for _, n := range names {
			fields = append(fields, propField{name: n})
		}
	default:
		fs, ok := otherOpProps[name]
		if !ok {
			p.fail(o, ErrUnsupported, "properties of op %s", name)
			return nil
		}
		fields = fs
	}
	d := newDecoder(p.f.in, o.propsRaw.start, o.propsRaw.end, "properties")
	var out []nattr
	for _, fl := range fields {
		var a attr
		if fl.optional {
			i, present := d.flagged()
			if !present {
				continue
			}
			a = p.f.attrAt(d, i)
		} else {
			a = p.f.attrRef(d)
		}
		out = append(out, nattr{fl.name, a})
	}
	if d.err == nil && !d.empty() {
		d.fail("%d bytes after the properties of %s", d.left(), name)
	}
	if d.err != nil && p.err == nil {
		p.err = d.err
	}
	return out
}

type propField struct {
	name     string
	optional bool
}

// otherOpProps lists the properties (attributes sorted by name) of the ops of other
// dialects that appear beside VHLO in portable artifacts.
var otherOpProps = map[string][]propField{
	"builtin.module":          {{"sym_name", true}, {"sym_visibility", true}},
	"sdy.mesh":                {{"mesh", false}, {"sym_name", false}},
	"sdy.sharding_constraint": {{"sharding", false}},
	"sdy.reshard":             {{"sharding", false}},
	"sdy.sharding_group":      {{"group_id", false}},
	"sdy.manual_computation":  {{"in_shardings", false}, {"manual_axes", false}, {"out_shardings", false}},
	"sdy.constant":            {{"value", false}},
	"sdy.propagation_barrier": {{"allowed_direction", false}},
}

// nattr is a named attribute whose name has been read.
type nattr struct {
	name string
	a    attr
}

func (p *printer) named(o *op, d aDict) []nattr {
	out := make([]nattr, 0, len(d))
	for _, e := range d {
		s, ok := e.name.(aString)
		if !ok {
			p.fail(o, ErrBytecode, "attribute name is not a string")
			return nil
		}
		out = append(out, nattr{s.s, e.value})
	}
	return out
}

func (p *printer) discardable(o *op) []nattr {
	if p.f.version < versionNativeProperties {
		return p.inherentFromAttrs(o, false)
	}
	if o.attrs == nil {
		return nil
	}
	d, ok := o.attrs.(aDict)
	if !ok {
		p.fail(o, ErrBytecode, "attributes of %s are not a dictionary", p.opName(o))
		return nil
	}
	return p.named(o, d)
}

// inherentFromAttrs splits the attribute dictionary of an op of bytecode before version 5,
// which had no properties: an op's inherent attributes (a function's sym_name and
// function_type, a comparison's direction) are entries of that dictionary, beside the
// discardable ones. It returns the inherent ones (by the names the reader knows for the op:
// vhloOpAttrs, otherOpProps) with inherent, the others without.
func (p *printer) inherentFromAttrs(o *op, inherent bool) []nattr {
	if o.attrs == nil {
		return nil
	}
	d, ok := o.attrs.(aDict)
	if !ok {
		p.fail(o, ErrBytecode, "attributes of %s are not a dictionary", p.opName(o))
		return nil
	}
	known := map[string]bool{}
	if p.f.dialects[o.name.dialect].name == "vhlo" {
		for _, n := range vhloOpAttrs[o.name.name] {
			known[n] = true
		}
	} else {
		for _, fl := range otherOpProps[p.opName(o)] {
			known[fl.name] = true
		}
	}
	all := p.named(o, d)
	out := make([]nattr, 0, len(all))
	for _, a := range all {
		if known[a.name] == inherent {
			out = append(out, a)
		}
	}
	return out
}

func (p *printer) topOp(o *op) {
	if p.opName(o) != "builtin.module" {
		p.fail(o, ErrUnsupported, "top-level op %s (want builtin.module)", p.opName(o))
		return
	}
	p.module(o, 0)
}

func (p *printer) module(o *op, depth int) {
	props := p.props(o)
	var name, visibility string
	for _, a := range props {
		s, ok := a.a.(aString)
		if !ok {
			p.fail(o, ErrBytecode, "module %s is not a string", a.name)
			return
		}
		if a.name == "sym_name" {
			name = s.s
		} else {
			visibility = s.s
		}
	}
	p.indent(depth)
	p.b.WriteString("module")
	if visibility != "" {
		p.b.WriteString(" " + visibility)
	}
	if name != "" {
		p.b.WriteString(" " + mlir.Symbol(name))
	}
	if attrs := p.discardable(o); len(attrs) > 0 {
		p.b.WriteString(" attributes ")
		p.dict(o, attrs)
	}
	p.b.WriteString(" {\n")
	if len(o.regions) != 1 || len(o.regions[0].blocks) > 1 {
		p.fail(o, ErrBytecode, "module without exactly one region of one block")
		return
	}
	for _, b := range o.regions[0].blocks {
		for _, c := range b.ops {
			if p.err != nil {
				return
			}
			p.moduleOp(c, depth+1)
		}
	}
	p.indent(depth)
	p.b.WriteString("}\n")
}

// moduleOp prints an op of a module's body: functions, meshes, nested modules.
func (p *printer) moduleOp(o *op, depth int) {
	switch p.opName(o) {
	case "vhlo.func_v1":
		p.function(o, depth)
	case "builtin.module":
		p.module(o, depth)
	case "sdy.mesh":
		p.sdyMesh(o, depth)
	default:
		p.op(o, depth, false)
	}
}

func (p *printer) sdyMesh(o *op, depth int) {
	props := p.props(o)
	var name string
	var mesh shardy.Mesh
	found := false
	for _, a := range props {
		switch a.name {
		case "sym_name":
			s, _ := a.a.(aString)
			name = s.s
		case "mesh":
			mesh, found = a.a.(shardy.Mesh)
		}
	}
	if name == "" || !found {
		p.op(o, depth, false)
		return
	}
	p.indent(depth)
	p.b.WriteString(shardy.NewMeshOp(name, mesh).String())
	if attrs := p.discardable(o); len(attrs) > 0 {
		p.b.WriteString(" ")
		p.dict(o, attrs)
	}
	p.b.WriteString("\n")
}

// function prints a vhlo.func_v1 as func.func in its pretty form.
func (p *printer) function(o *op, depth int) {
	props := p.props(o)
	if p.err != nil {
		return
	}
	var name, visibility string
	var fnType tFunc
	var argAttrs, resAttrs []attr
	for _, a := range props {
		switch a.name {
		case "sym_name":
			s, ok := a.a.(aString)
			if !ok {
				p.fail(o, ErrBytecode, "function name is not a string")
				return
			}
			name = s.s
		case "sym_visibility":
			s, ok := a.a.(aString)
			if !ok {
				p.fail(o, ErrBytecode, "function visibility is not a string")
				return
			}
			visibility = s.s
		case "function_type":
			t, ok := a.a.(aType)
			ft, ok2 := t.t.(tFunc)
			if !ok || !ok2 {
				p.fail(o, ErrBytecode, "function type is not a function type")
				return
			}
			fnType = ft
		case "arg_attrs", "res_attrs":
			l, ok := a.a.(aArray)
			if !ok {
				p.fail(o, ErrBytecode, "function %s is not an array", a.name)
				return
			}
			if a.name == "arg_attrs" {
				argAttrs = l
			} else {
				resAttrs = l
			}
		}
	}
	if len(o.regions) != 1 {
		p.fail(o, ErrBytecode, "function %s has %d regions", name, len(o.regions))
		return
	}
	body := o.regions[0]
	if len(body.blocks) == 0 {
		p.fail(o, ErrUnsupported, "function declaration %s without a body", name)
		return
	}
	entry := body.blocks[0]
	if len(entry.args) != len(fnType.in) {
		p.fail(o, ErrBytecode, "function %s: %d arguments, type has %d", name, len(entry.args), len(fnType.in))
		return
	}
	if len(argAttrs) != 0 && len(argAttrs) != len(fnType.in) || len(resAttrs) != 0 && len(resAttrs) != len(fnType.out) {
		p.fail(o, ErrBytecode, "function %s: argument or result attributes do not match its type", name)
		return
	}
	p.names, p.types = map[int]string{}, map[int]typ{}
	p.nextID, p.nextArg = 0, 0
	p.nameRegion(body)

	p.indent(depth)
	p.b.WriteString("func.func ")
	if visibility != "" {
		p.b.WriteString(visibility + " ")
	}
	p.b.WriteString(mlir.Symbol(name) + "(")
	for i, v := range entry.args {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString("%" + p.names[v.id] + ": ")
		writeType(p.b, v.typ)
		if i < len(argAttrs) {
			p.argAttrs(o, argAttrs[i])
		}
	}
	p.b.WriteString(")")
	if len(fnType.out) > 0 {
		p.b.WriteString(" -> (")
		for i, t := range fnType.out {
			if i > 0 {
				p.b.WriteString(", ")
			}
			writeType(p.b, t)
			if i < len(resAttrs) {
				p.argAttrs(o, resAttrs[i])
			}
		}
		p.b.WriteString(")")
	}
	if attrs := p.discardable(o); len(attrs) > 0 {
		p.b.WriteString(" attributes ")
		p.dict(o, attrs)
	}
	p.b.WriteString(" {\n")
	for i, blk := range body.blocks {
		if i > 0 {
			p.blockLabel(blk, i, depth+1)
		}
		for _, c := range blk.ops {
			if p.err != nil {
				return
			}
			p.op(c, depth+1, true)
		}
	}
	p.indent(depth)
	p.b.WriteString("}\n")
}

// argAttrs prints " {attrs}" for one argument or result, or nothing when it has none.
func (p *printer) argAttrs(o *op, a attr) {
	d, ok := a.(aDict)
	if !ok {
		p.fail(o, ErrBytecode, "argument attributes are not a dictionary")
		return
	}
	if len(d) == 0 {
		return
	}
	p.b.WriteByte(' ')
	p.dict(o, p.named(o, d))
}

// forwardingCast reports whether o is a builtin.unrealized_conversion_cast of one value to
// the same type once VHLO types are converted: the StableHLO writer puts them around ops
// of other dialects, and the reader drops them, as StableHLO's reader does.
func (p *printer) forwardingCast(o *op) bool {
	if o.name == nil || p.opName(o) != "builtin.unrealized_conversion_cast" || len(o.operands) != 1 ||
		len(o.results) != 1 || len(o.regions) != 0 || o.results[0].id < 0 {
		return false
	}
	in, ok := p.types[o.operands[0]]
	if _, named := p.names[o.operands[0]]; !ok || !named {
		return false
	}
	return p.typeText(in) == p.typeText(o.results[0].typ)
}

// nameRegion gives every value defined in r (and the regions nested in it) its name:
// block arguments %argN, op results %N.
func (p *printer) nameRegion(r *region) {
	for _, b := range r.blocks {
		for _, v := range b.args {
			p.names[v.id] = "arg" + strconv.Itoa(p.nextArg)
			p.types[v.id] = v.typ
			p.nextArg++
		}
		for _, o := range b.ops {
			if p.forwardingCast(o) {
				// The writer's casts between VHLO and builtin types of the same tensor:
				// the result is the operand.
				p.names[o.results[0].id] = p.names[o.operands[0]]
				p.types[o.results[0].id] = o.results[0].typ
				continue
			}
			for _, v := range o.results {
				if v.id >= 0 {
					p.names[v.id] = strconv.Itoa(p.nextID)
					p.types[v.id] = v.typ
					p.nextID++
				}
			}
			for _, c := range o.regions {
				p.nameRegion(c)
			}
		}
	}
}

func (p *printer) blockLabel(b *block, i, depth int) {
	p.indent(depth - 1)
	p.b.WriteString("^bb" + strconv.Itoa(i))
	if len(b.args) > 0 {
		p.b.WriteByte('(')
		for j, v := range b.args {
			if j > 0 {
				p.b.WriteString(", ")
			}
			p.b.WriteString("%" + p.names[v.id] + ": ")
			writeType(p.b, v.typ)
		}
		p.b.WriteByte(')')
	}
	p.b.WriteString(":\n")
}

func (p *printer) value(o *op, id int) string {
	n, ok := p.names[id]
	if !ok {
		p.fail(o, ErrBytecode, "operand of %s is not defined where it is used", p.opName(o))
		return "%error"
	}
	return "%" + n
}

// op prints one op in the generic form. inFunc says whether its parent is a function (a
// vhlo.return_v1 there is a func.return).
func (p *printer) op(o *op, depth int, inFunc bool) {
	if p.err != nil {
		return
	}
	if len(o.successors) > 0 {
		p.fail(o, ErrUnsupported, "op %s with successor blocks", p.opName(o))
		return
	}
	if p.forwardingCast(o) {
		return
	}
	name, inherent := p.convert(o, inFunc)
	if p.err != nil {
		return
	}
	p.indent(depth)
	if len(o.results) > 0 {
		for i, v := range o.results {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.b.WriteString(p.value(o, v.id))
		}
		p.b.WriteString(" = ")
	}
	p.b.WriteString(mlir.Quote(name))
	p.b.WriteByte('(')
	for i, id := range o.operands {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(p.value(o, id))
	}
	p.b.WriteByte(')')
	if len(inherent) > 0 {
		p.b.WriteString(" <")
		p.textDict(inherent)
		p.b.WriteString(">")
	}
	if len(o.regions) > 0 {
		p.b.WriteString(" (")
		for i, r := range o.regions {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.region(r, depth)
		}
		p.b.WriteString(")")
	}
	if attrs := p.discardable(o); len(attrs) > 0 {
		p.b.WriteByte(' ')
		p.dict(o, attrs)
	}
	p.b.WriteString(" : (")
	for i, id := range o.operands {
		if i > 0 {
			p.b.WriteString(", ")
		}
		writeType(p.b, p.typeOf(o, id))
	}
	p.b.WriteString(") -> ")
	if len(o.results) == 1 {
		if _, isFunc := o.results[0].typ.(tFunc); !isFunc {
			writeType(p.b, o.results[0].typ)
			p.b.WriteByte('\n')
			return
		}
	}
	p.b.WriteByte('(')
	for i, v := range o.results {
		if i > 0 {
			p.b.WriteString(", ")
		}
		writeType(p.b, v.typ)
	}
	p.b.WriteString(")\n")
}

func (p *printer) region(r *region, depth int) {
	p.b.WriteString("{\n")
	for i, blk := range r.blocks {
		if i > 0 || len(blk.args) > 0 {
			p.blockLabel(blk, i, depth+1)
		}
		for _, c := range blk.ops {
			p.op(c, depth+1, false)
		}
	}
	p.indent(depth)
	p.b.WriteString("}")
}

// typeOf finds the type of a value from its definition.
func (p *printer) typeOf(o *op, id int) typ {
	if t, ok := p.types[id]; ok {
		return t
	}
	p.fail(o, ErrBytecode, "operand of %s has no known type", p.opName(o))
	return nil
}
