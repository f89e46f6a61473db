package refine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shapes"
)

// typ is a type of the module: a ranked tensor type (dtype and dims, -1 for "?") or, for
// anything else (!stablehlo.token, tuple<...>), the text as written.
type typ struct {
	raw   string // the text of a type that is not a ranked tensor; "" for a tensor
	dtype string // a tensor's element type as StableHLO writes it: "f32", "complex<f32>"
	dims  []int  // a tensor's dimensions, -1 for a dynamic one
}

// parseType reads a type as the generic form writes it.
func parseType(s string) (typ, error) {
	body, ok := strings.CutPrefix(s, "tensor<")
	if !ok || !strings.HasSuffix(body, ">") {
		if strings.Contains(s, "?") {
			return typ{}, fmt.Errorf("%w: type %s with dynamic dimensions", ErrUnsupported, s)
		}
		if strings.HasPrefix(s, "!") || strings.HasPrefix(s, "tuple<") {
			return typ{raw: s}, nil // a token or a tuple, which refinement leaves as it is
		}
		return typ{}, fmt.Errorf("%w: type %s is not a tensor, a token or a tuple", ErrSyntax, s)
	}
	body = body[:len(body)-1]
	if strings.Contains(body, ",") {
		return typ{}, fmt.Errorf("%w: tensor type %s with an encoding (bounded dynamism)", ErrUnsupported, s)
	}
	var dims []int
	for {
		i := 0
		for i < len(body) && (body[i] >= '0' && body[i] <= '9' || body[i] == '?') {
			i++
		}
		if i == 0 || i == len(body) || body[i] != 'x' {
			break
		}
		if body[:i] == "?" {
			dims = append(dims, -1)
		} else {
			n, err := strconv.Atoi(body[:i])
			if err != nil {
				return typ{}, fmt.Errorf("%w: tensor type %s", ErrSyntax, s)
			}
			dims = append(dims, n)
		}
		body = body[i+1:]
	}
	if _, err := shapes.ParseDType(body); err != nil {
		return typ{}, fmt.Errorf("%w: tensor type %s: %w", ErrSyntax, s, err)
	}
	return typ{dtype: body, dims: dims}, nil
}

// tensor reports whether t is a ranked tensor type.
func (t typ) tensor() bool { return t.raw == "" }

// static reports whether t has no dynamic dimension.
func (t typ) static() bool {
	for _, d := range t.dims {
		if d < 0 {
			return false
		}
	}
	return true
}

// size returns the element count of a static tensor type.
func (t typ) size() int {
	n := 1
	for _, d := range t.dims {
		n *= d
	}
	return n
}

func (t typ) String() string {
	if !t.tensor() {
		return t.raw
	}
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range t.dims {
		if d < 0 {
			b.WriteString("?x")
		} else {
			b.WriteString(strconv.Itoa(d) + "x")
		}
	}
	b.WriteString(t.dtype + ">")
	return b.String()
}

func (t typ) equal(u typ) bool {
	if t.raw != u.raw || t.dtype != u.dtype || len(t.dims) != len(u.dims) {
		return false
	}
	for i := range t.dims {
		if t.dims[i] != u.dims[i] {
			return false
		}
	}
	return true
}

// withDims returns a tensor type of t's element type and dims dims.
func (t typ) withDims(dims []int) typ { return typ{dtype: t.dtype, dims: dims} }

// arg is a function or block argument: its SSA name, type and attribute dictionary text.
type arg struct {
	name  string
	t     typ
	attrs string // "{...}" as written, or ""
}

// op is one operation in the generic form: results = "name"(operands) <{props}> (regions)
// {attrs} : (ins) -> outs.
type op struct {
	results  []string
	name     string
	operands []string
	props    string // between "<{" and "}>"; "" when absent
	regions  []*region
	attrs    string // between "{" and "}"; "" when absent
	ins      []typ
	outs     []typ
	pre      []*op // refined: ops refinement adds before this one
}

// region is a region of one block: its arguments and operations.
type region struct {
	label string // "^bb0", "" for a region without a block header
	args  []arg
	ops   []*op
}

// function is a func.func of the module.
type function struct {
	visibility string // "public", "private"
	name       string
	args       []arg
	results    []arg // the name is unused
	body       *region
	consts     [][]int64 // refined: the known contents of each result (not printed)
}

// module is the text around the functions and the functions.
type module struct {
	head   string // up to the first top-level op inside the module's body
	pieces []any  // string (other top-level ops, as written) or *function, in order
	funcs  map[string]*function
}

// parser reads the generic form text mlir/bytecode.ToText writes.
type parser struct {
	s      *mlir.Scanner
	err    error
	groups map[string][]string // the names given to the results of each group %name:N
}

func (p *parser) failf(format string, args ...any) {
	if p.err == nil {
		off := p.s.Peek().Off
		p.err = fmt.Errorf("%w: at byte %d: %s", ErrSyntax, off, fmt.Sprintf(format, args...))
	}
}

// next consumes a token; the end of the text, which no caller expects, is an error.
func (p *parser) next() mlir.Token {
	t := p.s.Next()
	if t.Kind == mlir.EOF && p.err == nil {
		if err := p.s.Err(); err != nil {
			p.err = fmt.Errorf("%w: %w", ErrSyntax, err)
		} else {
			p.err = fmt.Errorf("%w: the text ends inside the module", ErrSyntax)
		}
	}
	return t
}

func (p *parser) expect(k mlir.Kind, text string) mlir.Token {
	t := p.next()
	if p.err == nil && (t.Kind != k || text != "" && t.Text != text) {
		p.failf("expected %q, got %q", text, t.Text)
	}
	return t
}

// inner returns a bracketed group's text without its brackets; a group balanced cut short
// (the empty text) has none.
func inner(group string) string {
	if len(group) < 2 {
		return ""
	}
	return group[1 : len(group)-1]
}

func (p *parser) peekIs(k mlir.Kind, text string) bool { return p.s.Peek().Is(k, text) }

// balanced consumes the bracketed group whose opening token is next and returns its text,
// brackets included.
func (p *parser) balanced() string {
	open := p.next()
	if p.err == nil && (open.Kind != mlir.Punct || !strings.Contains("([{<", open.Text)) {
		p.failf("expected an opening bracket, got %q", open.Text)
	}
	depth := p.s.Depth() - 1
	for p.err == nil && p.s.Depth() > depth {
		if t := p.next(); t.Kind == mlir.EOF {
			p.failf("unclosed %q", open.Text)
		}
	}
	if p.err != nil {
		return "" // a group cut short is no group: callers may slice off its brackets
	}
	return p.s.Src()[open.Off:p.s.Offset()]
}

// typeText reads one type: an identifier (tensor, i32, tuple, !stablehlo.token) and the
// angle-bracket group right after it, if any.
func (p *parser) typeText() typ {
	t := p.next()
	if t.Kind != mlir.Ident && t.Kind != mlir.BangIdent {
		p.failf("expected a type, got %q", t.Text)
		return typ{}
	}
	end := t.End()
	if n := p.s.Peek(); n.Is(mlir.Punct, "<") && n.Off == end {
		p.balanced()
		end = p.s.Offset()
	}
	ty, err := parseType(p.s.Src()[t.Off:end])
	if err != nil && p.err == nil {
		p.err = err
	}
	return ty
}

// typeList reads "(" types ")" or, when unparenthesized is allowed and no "(" follows, one type.
func (p *parser) typeList(unparenthesized bool) []typ {
	if !p.peekIs(mlir.Punct, "(") {
		if unparenthesized {
			return []typ{p.typeText()}
		}
		p.failf("expected a type list")
		return nil
	}
	p.next()
	var out []typ
	for p.err == nil && !p.peekIs(mlir.Punct, ")") {
		out = append(out, p.typeText())
		if p.peekIs(mlir.Punct, ",") {
			p.next()
		}
	}
	p.expect(mlir.Punct, ")")
	return out
}

// argList reads "(" %name: type {attrs}, ... ")".
func (p *parser) argList() []arg {
	p.expect(mlir.Punct, "(")
	var out []arg
	for p.err == nil && !p.peekIs(mlir.Punct, ")") {
		var a arg
		if p.s.Peek().Kind == mlir.PercentIdent {
			a.name = p.next().Text
			p.expect(mlir.Punct, ":")
		}
		a.t = p.typeText()
		if p.peekIs(mlir.Punct, "{") {
			a.attrs = p.balanced()
		}
		out = append(out, a)
		if p.peekIs(mlir.Punct, ",") {
			p.next()
		}
	}
	p.expect(mlir.Punct, ")")
	return out
}

// parseModule reads a module of the generic form.
func parseModule(text string) (*module, error) {
	text, err := stripLocations(text)
	if err != nil {
		return nil, err
	}
	p := &parser{s: mlir.NewScanner(text)}
	m := &module{funcs: map[string]*function{}}
	start := p.expect(mlir.Ident, "module").Off
	for p.err == nil && !p.peekIs(mlir.Punct, "{") {
		if p.peekIs(mlir.Ident, "attributes") {
			p.next()
			p.balanced()
			continue
		}
		p.next()
	}
	p.expect(mlir.Punct, "{")
	m.head = text[start:p.s.Offset()] + "\n"
	for p.err == nil {
		t := p.s.Peek()
		if t.Kind == mlir.EOF {
			p.next() // an error
			break
		}
		if t.Is(mlir.Punct, "}") {
			p.next()
			break
		}
		if t.Is(mlir.Ident, "func.func") {
			f := p.function()
			if p.err == nil {
				if m.funcs[f.name] != nil {
					p.failf("function @%s twice", f.name)
				}
				m.funcs[f.name] = f
				m.pieces = append(m.pieces, f)
			}
			continue
		}
		// Any other top-level op (sdy.mesh): kept as written, to the end of its line.
		start := t.Off
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			p.failf("unterminated top-level op")
			break
		}
		for p.err == nil && p.s.Peek().Off < start+end && p.s.Peek().Kind != mlir.EOF {
			if n := p.s.Peek(); n.Is(mlir.Punct, "<") || n.Is(mlir.Punct, "{") || n.Is(mlir.Punct, "(") || n.Is(mlir.Punct, "[") {
				p.balanced()
			} else {
				p.next()
			}
		}
		m.pieces = append(m.pieces, strings.TrimSpace(text[start:p.s.Offset()]))
	}
	if p.err != nil {
		return nil, p.err
	}
	return m, nil
}

// function reads func.func [visibility] @name(args) [-> results] [attributes {...}] { body }.
func (p *parser) function() *function {
	p.expect(mlir.Ident, "func.func")
	f := &function{}
	if t := p.s.Peek(); t.Kind == mlir.Ident {
		f.visibility = p.next().Text
	}
	name := p.expect(mlir.AtIdent, "")
	f.name, _ = name.Symbol()
	f.args = p.argList()
	if p.peekIs(mlir.Punct, "->") {
		p.next()
		if p.peekIs(mlir.Punct, "(") {
			f.results = p.argList()
		} else {
			a := arg{t: p.typeText()}
			if p.peekIs(mlir.Punct, "{") && !p.bodyFollows() {
				a.attrs = p.balanced()
			}
			f.results = []arg{a}
		}
	}
	if p.peekIs(mlir.Ident, "attributes") {
		p.failf("function attributes are not read")
		return f
	}
	f.body = p.region()
	return f
}

// bodyFollows reports whether the "{" that comes next opens a body (a newline follows it).
func (p *parser) bodyFollows() bool {
	t := p.s.Peek()
	rest := p.s.Src()[t.End():]
	return strings.HasPrefix(strings.TrimLeft(rest, " \t"), "\n")
}

// region reads "{" [^label(args):] ops "}".
func (p *parser) region() *region {
	p.expect(mlir.Punct, "{")
	r := &region{}
	if p.s.Peek().Kind == mlir.CaretIdent {
		r.label = p.next().Text
		r.args = p.argList()
		p.expect(mlir.Punct, ":")
	}
	for p.err == nil && !p.peekIs(mlir.Punct, "}") {
		r.ops = append(r.ops, p.op())
	}
	p.expect(mlir.Punct, "}")
	return r
}

// op reads one operation, in the generic form or in its custom form (pretty.go).
func (p *parser) op() *op {
	o := &op{}
	for p.err == nil && p.s.Peek().Kind == mlir.PercentIdent {
		r := p.next().Text
		if p.peekIs(mlir.Punct, ":") {
			p.next()
			t := p.expect(mlir.Int, "")
			n, err := strconv.Atoi(t.Text)
			if err != nil || n < 1 || n > maxGroup {
				p.failf("a group of %s results", t.Text)
				return o
			}
			o.results = append(o.results, p.group(r, n)...)
		} else {
			o.results = append(o.results, r)
		}
		if p.peekIs(mlir.Punct, ",") {
			p.next()
		}
	}
	if len(o.results) > 0 {
		p.expect(mlir.Punct, "=")
	}
	if p.s.Peek().Kind == mlir.Ident {
		p.prettyOp(o)
		return o
	}
	name := p.expect(mlir.String, "")
	o.name, _ = mlir.Unquote(name.Text)
	p.expect(mlir.Punct, "(")
	for p.err == nil && !p.peekIs(mlir.Punct, ")") {
		if p.s.Peek().Kind != mlir.PercentIdent {
			p.failf("operand %q of %s is not a value", p.s.Peek().Text, o.name)
		}
		o.operands = append(o.operands, p.value())
		if p.peekIs(mlir.Punct, ",") {
			p.next()
		}
	}
	p.expect(mlir.Punct, ")")
	if p.peekIs(mlir.Punct, "<") {
		g := p.balanced() // <{...}>
		o.props = strings.TrimSuffix(strings.TrimPrefix(g, "<{"), "}>")
	}
	if p.peekIs(mlir.Punct, "(") {
		p.next()
		for p.err == nil && !p.peekIs(mlir.Punct, ")") {
			o.regions = append(o.regions, p.region())
			if p.peekIs(mlir.Punct, ",") {
				p.next()
			}
		}
		p.expect(mlir.Punct, ")")
	}
	if p.peekIs(mlir.Punct, "{") {
		o.attrs = inner(p.balanced())
	}
	p.expect(mlir.Punct, ":")
	o.ins = p.typeList(false)
	p.expect(mlir.Punct, "->")
	o.outs = p.typeList(true)
	if p.err == nil && (len(o.ins) != len(o.operands) || len(o.outs) != len(o.results)) {
		p.failf("%s: %d operands and %d results, its type has %d and %d", o.name, len(o.operands), len(o.results), len(o.ins), len(o.outs))
	}
	return o
}
