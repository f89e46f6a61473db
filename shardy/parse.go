package shardy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
)

// The parser is a hand-written recursive descent over the attribute text.
// Whitespace (and // comments) may appear between any two tokens, as in
// MLIR. Errors stop the parse at the first problem; parse functions return
// the error as a *ParseError with the byte offset.

type parser struct {
	src string
	pos int
}

// bailout carries a *ParseError out of the recursive descent.
type bailout struct{ err *ParseError }

func parse[T any](src string, f func(p *parser) T) (v T, err error) {
	p := &parser{src: src}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			var zero T
			v, err = zero, b.err
		}
	}()
	v = f(p)
	p.skipSpace()
	if p.pos < len(p.src) {
		p.failExpected("end of input")
	}
	return v, nil
}

// ParseMesh reads a mesh attribute: `<["x"=4, "y"=2]>`,
// `<["x"=2], device_ids=[1, 0]>`, `<[]>`, also with a `#sdy.mesh` or
// `mesh` prefix, and the older JAX form `<"x"=4, "y"=2>`.
func ParseMesh(s string) (Mesh, error) {
	return parse(s, func(p *parser) Mesh {
		p.skipSpace()
		if p.peek() == '#' {
			p.pos++
			p.keyword("sdy.mesh")
		} else if p.peekWord() == "mesh" {
			p.keyword("mesh")
		}
		return p.meshBody()
	})
}

// ParseMeshOp reads a mesh symbol op: `sdy.mesh @mesh = <["x"=4, "y"=2]>`.
func ParseMeshOp(s string) (MeshOp, error) {
	return parse(s, (*parser).meshOp)
}

// ParseMeshOps reads a sequence of mesh symbol ops, one after another
// (typically one per line).
func ParseMeshOps(s string) ([]MeshOp, error) {
	return parse(s, func(p *parser) []MeshOp {
		var ops []MeshOp
		for {
			p.skipSpace()
			if p.pos >= len(p.src) {
				return ops
			}
			ops = append(ops, p.meshOp())
		}
	})
}

// ParseAxisRef reads an axis reference: `"x"` or `"x":(1)2`.
func ParseAxisRef(s string) (AxisRef, error) {
	return parse(s, (*parser).axisRef)
}

// ParseDimSharding reads one dimension sharding: `{}`, `{?}`,
// `{"x", "y"}`, `{"x", ?}p1`.
func ParseDimSharding(s string) (DimSharding, error) {
	return parse(s, (*parser).dim)
}

// ParseTensorSharding reads a tensor sharding, with or without the
// `#sdy.sharding` prefix: `#sdy.sharding<@mesh, [{"x"}p0, {?}],
// replicated={"y"}>`, `<mesh<["x"=2]>, [{"x"}]>`.
func ParseTensorSharding(s string) (TensorSharding, error) {
	return parse(s, func(p *parser) TensorSharding {
		p.skipSpace()
		if p.peek() == '#' {
			p.pos++
			p.keyword("sdy.sharding")
		}
		return p.sharding()
	})
}

// ParseTensorShardingPerValue reads `#sdy.sharding_per_value<[<@mesh,
// [{"x"}]>, ...]>`; the prefix may be omitted (`<[...]>`).
func ParseTensorShardingPerValue(s string) (TensorShardingPerValue, error) {
	return parse(s, func(p *parser) TensorShardingPerValue {
		p.skipSpace()
		if p.peek() == '#' {
			p.pos++
			p.keyword("sdy.sharding_per_value")
		}
		p.expect('<')
		list := p.shardingList()
		p.expect('>')
		return TensorShardingPerValue{shardings: list}
	})
}

// ParseShardingList reads a bracketed list of stripped shardings, as in
// manual_computation's in_shardings=[...]: `[<@mesh, [{"x"}]>, <@mesh, []>]`.
func ParseShardingList(s string) ([]TensorSharding, error) {
	return parse(s, (*parser).shardingList)
}

// ParseManualAxes reads a manual_computation axis list: `{"x", "y"}` or `{}`.
func ParseManualAxes(s string) (ManualAxes, error) {
	return parse(s, (*parser).manualAxes)
}

// ParseShardingRule reads an op sharding rule, with or without the
// `#sdy.op_sharding_rule` prefix: `#sdy.op_sharding_rule<([i, j], [j,
// k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`. Factor sizes are listed in
// factor order (`{i=8, j=16}`, never `{j=16, i=8}`), and the factor kinds in
// Shardy's order (reduction, need_replication, permutation,
// blocked_propagation), as Shardy's parser requires.
func ParseShardingRule(s string) (ShardingRule, error) {
	return parse(s, func(p *parser) ShardingRule {
		p.skipSpace()
		if p.peek() == '#' {
			p.pos++
			p.keyword(ruleAttrPrefix[1:])
		}
		return p.rule()
	})
}

// ParseAttribute reads any attribute of this package in its standalone form,
// as Attr.Attribute prints it: `#sdy.mesh<...>`, `#sdy.sharding<...>`,
// `#sdy.sharding_per_value<...>`, `#sdy.op_sharding_rule<...>`,
// `#sdy.dim_mappingij`, and `#sdy<name...>` for manual_axes, mesh_axis,
// sub_axis_info, axis_ref, dimension_sharding, axis_ref_list,
// list_of_axis_ref_lists, all_to_all_param, all_to_all_param_list,
// tensor_mapping and dim_mapping. The result's dynamic type is the value's
// (Mesh, TensorSharding, ...).
func ParseAttribute(s string) (Attr, error) {
	return parse(s, (*parser).attribute)
}

// MustParseTensorSharding is ParseTensorSharding that panics on error, for
// tests and package-level variables.
func MustParseTensorSharding(s string) TensorSharding {
	v, err := ParseTensorSharding(s)
	if err != nil {
		panic(err)
	}
	return v
}

// MustParseMesh is ParseMesh that panics on error.
func MustParseMesh(s string) Mesh {
	v, err := ParseMesh(s)
	if err != nil {
		panic(err)
	}
	return v
}

// ---- grammar ----

func (p *parser) meshOp() MeshOp {
	p.keyword("sdy.mesh")
	name := p.symbol()
	p.expect('=')
	p.skipSpace()
	if p.peek() == '#' {
		p.pos++
		p.keyword("sdy.mesh")
	}
	op := MeshOp{name: name, mesh: p.meshBody()}
	p.skipAttrDict()
	return op
}

// skipAttrDict skips the attribute dictionary that may follow a mesh op: JAX 0.12 writes
// `{stablehlo.mesh = {axes = [{name = "X", size = 2 : i64}, ...]}}`, which restates the mesh's
// axes for StableHLO; MeshOp does not keep it (String prints the op as Shardy does, without
// it; JAXString writes it anew from the mesh).
func (p *parser) skipAttrDict() {
	p.skipSpace()
	if p.peek() != '{' {
		return
	}
	s := mlir.NewScanner(p.src[p.pos:])
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		if s.Depth() == 0 {
			p.pos += t.End()
			return
		}
	}
	if err := s.Err(); err != nil {
		p.failAt(p.pos, "mesh attributes: %v", err)
	}
	p.failAt(p.pos, "mesh attributes are never closed")
}

// meshBody reads `<[axes](, device_ids=[ids])?>`.
func (p *parser) meshBody() Mesh {
	var m Mesh
	p.expect('<')
	p.skipSpace()
	switch {
	case p.accept('['):
		if !p.accept(']') {
			for {
				m.axes = append(m.axes, p.meshAxis())
				if p.accept(']') {
					break
				}
				p.expectOneOf(',', "',' or ']'")
			}
		}
		if p.accept('>') {
			return m
		}
		p.expectOneOf(',', "',' or '>'")
	case p.peek() == '"':
		// Older JAX form: <"x"=4, "y"=2>.
		for {
			m.axes = append(m.axes, p.meshAxis())
			if p.accept('>') {
				return m
			}
			p.expectOneOf(',', "',' or '>'")
			p.skipSpace()
			if p.peek() != '"' {
				break
			}
		}
	case p.accept('>'):
		return m
	default:
		p.failExpected("'['")
	}
	p.keyword("device_ids")
	p.expect('=')
	p.expect('[')
	m.ids = []int{}
	if !p.accept(']') {
		for {
			m.ids = append(m.ids, p.integer("device id"))
			if p.accept(']') {
				break
			}
			p.expectOneOf(',', "',' or ']'")
		}
	}
	p.expect('>')
	// Like Shardy's MeshAttr builder, drop device ids equal to iota.
	return NewMesh(m.axes, m.ids)
}

func (p *parser) meshAxis() MeshAxis {
	name := p.str()
	p.expect('=')
	return MeshAxis{Name: name, Size: p.integer("axis size")}
}

func (p *parser) axisRef() AxisRef {
	name := p.str()
	if !p.accept(':') {
		return Axis(name)
	}
	info := p.subAxisInfo()
	return SubAxis(name, info.PreSize, info.Size)
}

// subAxisInfo reads `(m)k`.
func (p *parser) subAxisInfo() SubAxisInfo {
	p.expect('(')
	pre := p.integer("sub-axis pre-size")
	p.expect(')')
	return SubAxisInfo{PreSize: pre, Size: p.integer("sub-axis size")}
}

// manualAxes reads `{"x", "y"}`.
func (p *parser) manualAxes() ManualAxes {
	p.expect('{')
	var names []string
	if !p.accept('}') {
		for {
			names = append(names, p.str())
			if p.accept('}') {
				break
			}
			p.expectOneOf(',', "',' or '}'")
		}
	}
	return ManualAxes{names: names}
}

func (p *parser) dim() DimSharding {
	var d DimSharding
	p.expect('{')
	if !p.accept('}') {
		for {
			p.skipSpace()
			if p.accept('?') {
				d.open = true
				p.expectOneOf('}', "'}' after '?'")
				break
			}
			d.axes = append(d.axes, p.axisRef())
			if p.accept('}') {
				break
			}
			p.expectOneOf(',', "',' or '}'")
		}
	}
	// Optional priority: a keyword p<digits> right after the brace.
	p.skipSpace()
	if p.pos < len(p.src) && (isLetter(p.src[p.pos]) || p.src[p.pos] == '_') {
		start := p.pos
		w := p.word()
		digits := strings.TrimPrefix(w, "p")
		if len(w) < 2 || w[0] != 'p' || strings.Trim(digits, "0123456789") != "" {
			p.failAt(start, "expecting priority in format 'p<number>', got: %s", w)
		}
		if len(digits) > 1 && digits[0] == '0' {
			p.failAt(start, "priorities with leading zeros are not allowed, got: %s", w)
		}
		n, err := strconv.ParseInt(digits, 10, 0)
		if err != nil {
			p.failAt(start, "expecting integer priority, got: %s", w)
		}
		d.priority, d.hasPriority = int(n), true
	}
	return d
}

func (p *parser) sharding() TensorSharding {
	var s TensorSharding
	p.expect('<')
	p.skipSpace()
	switch {
	case p.peek() == '@':
		s.meshName = p.symbol()
	case p.peek() == '#':
		p.pos++
		p.keyword("sdy.mesh")
		s.inline, s.mesh = true, p.meshBody()
	case p.peekWord() == "mesh":
		p.keyword("mesh")
		s.inline, s.mesh = true, p.meshBody()
	default:
		p.failExpected("mesh symbol '@name' or inline 'mesh<...>'")
	}
	p.expect(',')
	p.expect('[')
	s.dims = []DimSharding{}
	if !p.accept(']') {
		for {
			s.dims = append(s.dims, p.dim())
			if p.accept(']') {
				break
			}
			p.expectOneOf(',', "',' or ']'")
		}
	}
	// After the dims, as Shardy's parser: each `, replicated=` or `,
	// unreduced=` list may come once, in either order (a list may be given
	// again while it is still empty); `=` is optional before an unreduced
	// list, and anything else after a comma is an error.
	for !p.accept('>') {
		p.expectOneOf(',', "',' or '>'")
		switch w := p.peekWord(); {
		case w == "replicated" && len(s.replicated) == 0:
			p.keyword(w)
			p.expect('=')
			s.replicated = p.refList()
		case w == "unreduced" && len(s.unreduced) == 0:
			p.keyword(w)
			s.reduction = ReduceSum
			if p.accept('=') {
				switch p.peekWord() {
				case "sum":
					p.keyword("sum")
				case "max":
					p.keyword("max")
					s.reduction = ReduceMax
				case "min":
					p.keyword("min")
					s.reduction = ReduceMin
				}
			}
			s.unreduced = p.refList()
		default:
			p.failExpected("valid named axis list after comma")
		}
	}
	if len(s.unreduced) == 0 {
		s.reduction = 0
	}
	return s
}

func (p *parser) refList() []AxisRef {
	var refs []AxisRef
	p.expect('{')
	if p.accept('}') {
		return nil
	}
	for {
		refs = append(refs, p.axisRef())
		if p.accept('}') {
			return refs
		}
		p.expectOneOf(',', "'}'")
	}
}

// attribute reads a standalone attribute (see ParseAttribute).
func (p *parser) attribute() Attr {
	p.expectOneOf('#', "'#'")
	start := p.pos
	switch w := p.peekWord(); {
	case w == "sdy":
		p.keyword(w)
		p.expect('<')
		a := p.genericAttr()
		p.expect('>')
		return a
	case w == meshAttrPrefix[1:]:
		p.keyword(w)
		return p.meshBody()
	case w == shardingAttrPrefix[1:]:
		p.keyword(w)
		return p.sharding()
	case w == perValueAttrPrefix[1:]:
		p.keyword(w)
		p.expect('<')
		list := p.shardingList()
		p.expect('>')
		return TensorShardingPerValue{shardings: list}
	case w == ruleAttrPrefix[1:]:
		p.keyword(w)
		return p.rule()
	case strings.HasPrefix(w, dimMappingPrefix[1:]):
		p.keyword(w)
		return DimMapping{factors: p.factorSymbols(w[len(dimMappingPrefix)-1:], start+len(dimMappingPrefix)-1)}
	}
	p.failExpected("Shardy attribute")
	return nil
}

// genericAttr reads the `name...` inside `#sdy<name...>`.
func (p *parser) genericAttr() Attr {
	switch w := p.word(); w {
	case "manual_axes":
		return p.manualAxes()
	case "mesh_axis":
		return p.meshAxis()
	case "sub_axis_info":
		return p.subAxisInfo()
	case "axis_ref":
		return p.axisRef()
	case "dimension_sharding":
		return p.dim()
	case "axis_ref_list":
		return AxisRefList{refs: p.refList()}
	case "list_of_axis_ref_lists":
		return p.listOfRefLists()
	case "all_to_all_param":
		return p.allToAll()
	case "all_to_all_param_list":
		return p.allToAllList()
	case "tensor_mapping":
		return p.tensorMapping()
	case "dim_mapping":
		return p.dimMapping()
	default:
		p.pos -= len(w)
		p.failExpected("Shardy attribute name")
		return nil
	}
}

// listOfRefLists reads `[{"x"}, {}]`.
func (p *parser) listOfRefLists() ListOfAxisRefLists {
	var l ListOfAxisRefLists
	p.expect('[')
	if p.accept(']') {
		return l
	}
	for {
		l.lists = append(l.lists, AxisRefList{refs: p.refList()})
		if p.accept(']') {
			return l
		}
		p.expectOneOf(',', "',' or ']'")
	}
}

// allToAll reads `{"x"}: 0->1`.
func (p *parser) allToAll() AllToAllParam {
	var a AllToAllParam
	a.axes = p.refList()
	p.expect(':')
	a.src = p.integer("source dimension")
	p.arrow()
	a.tgt = p.integer("target dimension")
	return a
}

// allToAllList reads `[{"x"}: 0->1, ...]`.
func (p *parser) allToAllList() AllToAllParamList {
	var l AllToAllParamList
	p.expect('[')
	if p.accept(']') {
		return l
	}
	for {
		l.params = append(l.params, p.allToAll())
		if p.accept(']') {
			return l
		}
		p.expectOneOf(',', "',' or ']'")
	}
}

// rule reads the `<(...)->(...) {...} ...>` of an op sharding rule.
func (p *parser) rule() ShardingRule {
	var r ShardingRule
	p.expect('<')
	r.operands = p.mappings()
	p.arrow()
	r.results = p.mappings()
	if p.accept('{') && !p.accept('}') {
		for {
			p.skipSpace()
			start := p.pos
			w := p.word()
			want := len(r.factorSizes)
			f, rest := p.factorSymbol(w, start)
			if f != want {
				var exp, got strings.Builder
				writeFactor(&exp, want)
				writeFactor(&got, f)
				p.failAt(start, "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol '%s', received: '%s'", exp.String(), got.String())
			}
			if rest != "" {
				p.failAt(start, "expecting single factor symbol: %s", rest)
			}
			p.expect('=')
			r.factorSizes = append(r.factorSizes, p.integer("factor size"))
			if p.accept('}') {
				break
			}
			p.expectOneOf(',', "',' or '}'")
		}
	}
	for k, name := range factorKindNames {
		if p.peekWord() != name {
			continue
		}
		p.keyword(name)
		p.expect('=')
		p.expect('{')
		if p.accept('}') {
			continue
		}
		for {
			p.skipSpace()
			start := p.pos
			f, rest := p.factorSymbol(p.word(), start)
			if rest != "" {
				p.failAt(start, "expecting single factor symbol: %s", rest)
			}
			r.kinds[k] = append(r.kinds[k], f)
			if p.accept('}') {
				break
			}
			p.expectOneOf(',', "',' or '}'")
		}
	}
	if p.accept(',') {
		p.keyword("custom")
		r.custom = true
	}
	p.expect('>')
	return r
}

// mappings reads `([i, j], [k])`; `()` reads as none.
func (p *parser) mappings() []TensorMapping {
	var ms []TensorMapping
	p.expect('(')
	if p.accept(')') {
		return ms
	}
	for {
		ms = append(ms, p.tensorMapping())
		if p.accept(')') {
			return ms
		}
		p.expectOneOf(',', "',' or ')'")
	}
}

// tensorMapping reads `[i, jk]`: one dimension mapping per dimension.
func (p *parser) tensorMapping() TensorMapping {
	var t TensorMapping
	p.expect('[')
	if p.accept(']') {
		return t
	}
	for {
		t.dims = append(t.dims, p.dimMapping())
		if p.accept(']') {
			return t
		}
		p.expectOneOf(',', "',' or ']'")
	}
}

// dimMapping reads the factor symbols of a dimension (`jk`), the same in
// full form (`#sdy.dim_mappingjk`), or nothing: the empty mapping, as
// Shardy's parser reads it.
func (p *parser) dimMapping() DimMapping {
	p.skipSpace()
	start := p.pos
	if p.accept('#') {
		w := p.peekWord()
		if !strings.HasPrefix(w, dimMappingPrefix[1:]) {
			p.failExpected("'" + dimMappingPrefix[1:] + "'")
		}
		p.pos += len(w)
		return DimMapping{factors: p.factorSymbols(w[len(dimMappingPrefix)-1:], start+len(dimMappingPrefix))}
	}
	w := p.peekWord()
	p.pos += len(w)
	return DimMapping{factors: p.factorSymbols(w, start)}
}

// factorSymbols reads factor symbols run together (`ijz_1`), which start at
// offset start of the input.
func (p *parser) factorSymbols(w string, start int) []int {
	var fs []int
	for w != "" {
		f, rest := p.factorSymbol(w, start)
		start += len(w) - len(rest)
		fs = append(fs, f)
		w = rest
	}
	return fs
}

// factorSymbol reads the first factor symbol of w, at offset start: `i` to
// `z` are factors 0 to 17, `z_1` is 18, and so on. It returns the factor and
// the rest of w. Errors have the wording of Shardy's parser.
func (p *parser) factorSymbol(w string, start int) (int, string) {
	const z = 'z' - 'i'
	if !strings.HasPrefix(w, "z_") {
		if c := w[0]; c < 'i' || c > 'z' {
			p.failAt(start, "expecting symbol from 'i' to 'z'. Received: '%c'", c)
		}
		return int(w[0] - 'i'), w[1:]
	}
	end := 2
	for end < len(w) && isDigit(w[end]) {
		end++
	}
	digits := w[2:end]
	switch {
	case digits == "":
		p.failAt(start, "expecting integer after 'z_'. Received: '%s'", w)
	case digits[0] == '0':
		p.failAt(start, "expecting positive integer without leading zeros. Received: '%s'", digits)
	}
	n, err := strconv.ParseInt(digits, 10, 0)
	if err != nil || n > math.MaxInt-z {
		p.failAt(start, "expecting symbol index <=2^63-1. Received: '%s'", digits)
	}
	return int(n) + z, w[end:]
}

// arrow consumes `->`.
func (p *parser) arrow() {
	p.skipSpace()
	if !strings.HasPrefix(p.src[p.pos:], "->") {
		p.failExpected("'->'")
	}
	p.pos += 2
}

// shardingList reads `[<...>, ...]`. An element may carry the
// `#sdy.sharding` prefix, as MLIR allows for any attribute of a known type;
// Shardy prints it stripped.
func (p *parser) shardingList() []TensorSharding {
	list := []TensorSharding{}
	p.expect('[')
	if p.accept(']') {
		return list
	}
	for {
		if p.accept('#') {
			p.keyword("sdy.sharding")
		}
		list = append(list, p.sharding())
		if p.accept(']') {
			return list
		}
		p.expectOneOf(',', "',' or ']'")
	}
}

// ---- tokens ----

// skipSpace skips whitespace and // comments, as the MLIR scanner does.
func (p *parser) skipSpace() { p.pos = mlir.SkipSpace(p.src, p.pos) }

// peek returns the byte at the current position, or 0 at the end.
func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// accept skips space and consumes c if it comes next.
func (p *parser) accept(c byte) bool {
	p.skipSpace()
	if p.peek() == c && p.pos < len(p.src) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expect(c byte) {
	p.expectOneOf(c, "'"+string(c)+"'")
}

func (p *parser) expectOneOf(c byte, what string) {
	if !p.accept(c) {
		p.failExpected(what)
	}
}

// peekWord returns the bare identifier at the current position (after
// space) without consuming it.
func (p *parser) peekWord() string {
	p.skipSpace()
	end := p.pos
	for end < len(p.src) && isWordByte(p.src[end], end == p.pos) {
		end++
	}
	return p.src[p.pos:end]
}

func isWordByte(c byte, first bool) bool {
	return isLetter(c) || c == '_' || !first && (isDigit(c) || c == '$' || c == '.')
}

// word consumes a bare identifier [a-zA-Z_][a-zA-Z0-9_$.]*.
func (p *parser) word() string {
	w := p.peekWord()
	if w == "" {
		p.failExpected("identifier")
	}
	p.pos += len(w)
	return w
}

// keyword consumes the bare identifier kw.
func (p *parser) keyword(kw string) {
	if p.peekWord() != kw {
		p.failExpected("'" + kw + "'")
	}
	p.pos += len(kw)
}

// symbol consumes @name or @"name".
func (p *parser) symbol() string {
	p.expectOneOf('@', "symbol '@name'")
	if p.peek() == '"' {
		return p.str()
	}
	start := p.pos
	for p.pos < len(p.src) && isWordByte(p.src[p.pos], p.pos == start) {
		p.pos++
	}
	if p.pos == start {
		p.failExpected("symbol name")
	}
	return p.src[start:p.pos]
}

// str consumes an MLIR string literal and returns its value, read by the MLIR scanner:
// escapes are \\, \", \n, \t and \XX (two hex digits).
func (p *parser) str() string {
	p.skipSpace()
	if p.peek() != '"' {
		p.failExpected("string")
	}
	v, end, err := mlir.ReadString(p.src, p.pos)
	if err != nil {
		var e *mlir.Error
		errors.As(err, &e)
		p.failAt(e.Off, "%s", e.Msg)
	}
	p.pos = end
	return v
}

// integer consumes a decimal integer with an optional '-' sign.
func (p *parser) integer(what string) int {
	p.skipSpace()
	start := p.pos
	if p.peek() == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == digits {
		p.pos = start
		p.failExpected(what)
	}
	n, err := strconv.ParseInt(p.src[start:p.pos], 10, 0)
	if err != nil {
		p.failAt(start, "%s out of range: %s", what, p.src[start:p.pos])
	}
	return int(n)
}

// ---- errors ----

func (p *parser) failAt(pos int, format string, args ...any) {
	panic(bailout{&ParseError{Offset: pos, Msg: fmt.Sprintf(format, args...)}})
}

func (p *parser) failExpected(what string) {
	p.skipSpace()
	panic(bailout{&ParseError{Offset: p.pos, Expected: what, Found: p.describe()}})
}

// describe names the token at the current position for error messages.
func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	rest := p.src[p.pos:]
	const maxLen = 24
	var tok string
	switch c := rest[0]; {
	case c == '"':
		end := 1
		for end < len(rest) && rest[end] != '"' && rest[end] != '\n' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		tok = rest[:min(end+1, len(rest))]
		if len(tok) > maxLen {
			tok = tok[:maxLen] + "..."
		}
		return tok
	case isWordByte(c, true):
		tok = p.peekWord()
	case isDigit(c) || c == '-':
		end := 1
		for end < len(rest) && isDigit(rest[end]) {
			end++
		}
		tok = rest[:end]
	default:
		tok = rest[:1]
	}
	if len(tok) > maxLen {
		tok = tok[:maxLen] + "..."
	}
	return "'" + tok + "'"
}

// MeshOpsInModule finds the `sdy.mesh` ops of a StableHLO module's text with the MLIR
// scanner (so text in strings and comments is never taken for an op) and parses them. Each
// op runs from its `sdy.mesh` keyword to the end of its mesh attribute; a `loc(...)` after it
// is left alone. Errors carry the offset within the module: a *ParseError, or an error
// wrapping ErrSyntax for text the scanner cannot read.
func MeshOpsInModule(module string) ([]MeshOp, error) {
	var ops []MeshOp
	s := mlir.NewScanner(module)
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		if !t.Is(mlir.Ident, "sdy.mesh") {
			continue
		}
		// sdy.mesh @name = (#sdy.mesh)? <...>: read through the '>' closing the attribute.
		depth := s.Depth()
		end := t.End()
		for u := s.Next(); u.Kind != mlir.EOF; u = s.Next() {
			end = u.End()
			if u.Is(mlir.Punct, ">") && s.Depth() == depth {
				break
			}
		}
		op, err := ParseMeshOp(module[t.Off:end])
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				pe.Offset += t.Off
			}
			return nil, err
		}
		ops = append(ops, op)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("shardy: %w: %w", ErrSyntax, err)
	}
	return ops, nil
}
