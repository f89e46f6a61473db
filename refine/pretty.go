package refine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
)

// The custom forms of ops ("pretty" printing, as JAX's Exported.mlir_module() and MLIR's
// default printer write them): each is read into the generic op it stands for, its
// keyword entries (dims = [0, 1], dim = 0, EQ, ...) made the properties the generic form
// names (broadcast_dimensions = array<i64: 0, 1>, ...). The forms follow StableHLO's,
// Shardy's and the func dialect's assembly formats; an op in a custom form not read here is
// ErrUnsupported, naming it (its generic form, or the module's bytecode, is read).

// stripLocations returns text without its source locations: the loc(...) after ops,
// arguments and regions, and the #loc alias definitions around the module, which refinement
// does not keep.
func stripLocations(text string) (string, error) {
	if !strings.Contains(text, "loc(") {
		return text, nil
	}
	s := mlir.NewScanner(text)
	var b strings.Builder
	last := 0
	skipCall := func() { // the balanced "(...)" after loc
		depth := s.Depth()
		s.Next()
		for s.Depth() > depth {
			if s.Next().Kind == mlir.EOF {
				return
			}
		}
	}
	for {
		t := s.Next()
		if t.Kind == mlir.EOF {
			break
		}
		switch {
		case t.Is(mlir.Ident, "loc") && s.Peek().Is(mlir.Punct, "(") && s.Peek().Off == t.End():
			skipCall()
			b.WriteString(text[last:t.Off])
			last = s.Offset()
		case t.Kind == mlir.HashIdent && s.Depth() == 0 && s.Peek().Is(mlir.Punct, "="):
			s.Next()
			v := s.Next()
			if !v.Is(mlir.Ident, "loc") || !s.Peek().Is(mlir.Punct, "(") {
				return "", fmt.Errorf("%w: the attribute alias %s (only location aliases are read)", ErrUnsupported, t.Text)
			}
			skipCall()
			b.WriteString(text[last:t.Off])
			last = s.Offset()
		}
	}
	if err := s.Err(); err != nil {
		return "", fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// prettyForm reads the rest of an op in its custom form, its name already read into o.name.
type prettyForm func(p *parser, o *op)

var prettyForms map[string]prettyForm

func init() {
	prettyForms = map[string]prettyForm{
		"stablehlo.constant":                 (*parser).constantForm,
		"stablehlo.compare":                  (*parser).compareForm,
		"stablehlo.iota":                     keyed(map[string]entry{"dim": {"iota_dimension", i64}}),
		"stablehlo.dynamic_iota":             keyed(map[string]entry{"dim": {"iota_dimension", i64}}),
		"stablehlo.broadcast_in_dim":         keyed(map[string]entry{"dims": {"broadcast_dimensions", i64s}}),
		"stablehlo.dynamic_broadcast_in_dim": keyed(map[string]entry{"dims": {"broadcast_dimensions", i64s}}),
		"stablehlo.concatenate":              keyed(map[string]entry{"dim": {"dimension", i64}}),
		"stablehlo.get_dimension_size":       keyed(map[string]entry{"dim": {"dimension", i64}}),
		"stablehlo.transpose":                keyed(map[string]entry{"dims": {"permutation", i64s}}),
		"stablehlo.reverse":                  keyed(map[string]entry{"dims": {"dimensions", i64s}}),
		"stablehlo.dynamic_slice":            keyed(map[string]entry{"sizes": {"slice_sizes", i64s}}),
		"stablehlo.pad": keyed(map[string]entry{"low": {"edge_padding_low", i64s}, "high": {"edge_padding_high", i64s},
			"interior": {"interior_padding", i64s}}),
		"stablehlo.rng_bit_generator":    keyed(map[string]entry{"algorithm": {"rng_algorithm", enum("rng_algorithm")}}),
		"stablehlo.fft":                  keyed(map[string]entry{"type": {"fft_type", enum("fft_type")}, "length": {"fft_length", i64s}}),
		"stablehlo.cholesky":             keyed(map[string]entry{"lower": {"lower", same}}),
		"stablehlo.dot":                  keyed(map[string]entry{"precision": {"precision_config", precisions}}),
		"stablehlo.dot_general":          (*parser).dotGeneralForm,
		"stablehlo.convolution":          (*parser).convForm,
		"stablehlo.reduce_precision":     (*parser).reducePrecisionForm,
		"stablehlo.slice":                (*parser).sliceForm,
		"stablehlo.get_tuple_element":    (*parser).tupleElementForm,
		"stablehlo.tuple":                (*parser).tupleForm,
		"stablehlo.select":               (*parser).listTypedForm,
		"stablehlo.optimization_barrier": (*parser).listTypedForm,
		"stablehlo.custom_call":          (*parser).customCallForm,
		"stablehlo.composite":            (*parser).compositeForm,
		"stablehlo.reduce":               (*parser).reduceForm,
		"stablehlo.while":                (*parser).whileForm,
		"stablehlo.return":               (*parser).returnForm,
		"func.return":                    (*parser).returnForm,
		"sdy.return":                     (*parser).returnForm,
		"func.call":                      (*parser).callForm,
		"sdy.sharding_constraint":        (*parser).shardingForm,
		"sdy.reshard":                    (*parser).shardingForm,
		"sdy.manual_computation":         (*parser).manualForm,
	}
	// The ops whose custom form is operands, attributes and types (StableHLO's elementwise
	// ops and the dynamic shape ops).
	for _, n := range strings.Fields(`abs add and atan2 bitcast_convert cbrt ceil clamp complex convert cosine
		count_leading_zeros divide exponential exponential_minus_one floor imag is_finite log log_plus_one logistic
		maximum minimum multiply negate not or popcnt power real remainder round_nearest_afz round_nearest_even
		rsqrt shift_left shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor reshape
		dynamic_reshape dynamic_update_slice real_dynamic_slice dynamic_pad after_all create_token partition_id
		replica_id`) {
		prettyForms["stablehlo."+n] = keyed(nil)
	}
}

// entry says how a keyword entry of a custom form becomes a property: its name and how its
// value is written.
type entry struct {
	prop  string
	value func(string) (string, error)
}

func same(v string) (string, error) { return v, nil }

// i64 writes an integer entry as a property: 0 -> 0 : i64.
func i64(v string) (string, error) {
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return "", fmt.Errorf("%q is not an integer", v)
	}
	return v + " : i64", nil
}

// listBody returns what is between the brackets of "[...]".
func listBody(v string) (string, bool) {
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return "", false
	}
	return v[1 : len(v)-1], true
}

// i64s writes a list entry as a dense array property: [0, 1] -> array<i64: 0, 1>.
func i64s(v string) (string, error) {
	body, ok := listBody(v)
	if !ok {
		return "", fmt.Errorf("%q is not a list", v)
	}
	ints, ok := intList(body)
	if !ok {
		return "", fmt.Errorf("%q is not a list of integers", v)
	}
	return arrayI64(ints), nil
}

// enum writes an enum entry as StableHLO's attribute of that enum: DEFAULT ->
// #stablehlo<rng_algorithm DEFAULT>.
func enum(kind string) func(string) (string, error) {
	return func(v string) (string, error) { return "#stablehlo<" + kind + " " + v + ">", nil }
}

// precisions writes a precision list: [DEFAULT, HIGH] -> [#stablehlo<precision DEFAULT>, ...].
func precisions(v string) (string, error) {
	body, ok := listBody(v)
	if !ok {
		return "", fmt.Errorf("%q is not a list", v)
	}
	var out []string
	for _, f := range strings.Split(body, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, "#stablehlo<precision "+f+">")
		}
	}
	return "[" + strings.Join(out, ", ") + "]", nil
}

func (p *parser) unsupportedf(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: at byte %d: %s", ErrUnsupported, p.s.Peek().Off, fmt.Sprintf(format, args...))
	}
}

// prettyOp reads an op in its custom form; its results are already in o.
func (p *parser) prettyOp(o *op) {
	t := p.next()
	o.name = t.Text
	switch o.name {
	case "return":
		o.name = "func.return"
	case "call":
		o.name = "func.call"
	}
	form := prettyForms[o.name]
	if form == nil && strings.HasPrefix(o.name, "chlo.") {
		form = keyed(nil) // CHLO's ops are operands, attributes and types
	}
	if form == nil {
		p.unsupportedf("%s in its custom form (the generic form, or the module's bytecode, is read)", o.name)
		return
	}
	form(p, o)
	if p.err == nil && (len(o.ins) != len(o.operands) || len(o.outs) != len(o.results)) {
		p.failf("%s: %d operands and %d results, its type has %d and %d", o.name, len(o.operands), len(o.results), len(o.ins), len(o.outs))
	}
}

// values reads values separated by commas; more is true when a comma followed the last one
// and something other than a value came after it (a keyword entry).
func (p *parser) values() (vs []string, more bool) {
	for p.err == nil && p.s.Peek().Kind == mlir.PercentIdent {
		vs = append(vs, p.value())
		if !p.peekIs(mlir.Punct, ",") {
			return vs, false
		}
		p.next()
	}
	return vs, len(vs) > 0
}

// value reads one use of a value: %name, or %name#k for result k of a group %name:N.
func (p *parser) value() string {
	t := p.next()
	if t.Kind != mlir.PercentIdent {
		p.failf("expected a value, got %q", t.Text)
		return ""
	}
	if n := p.s.Peek(); n.Kind == mlir.HashIdent && n.Off == t.End() {
		p.next()
		k, err := strconv.Atoi(n.Text[1:])
		g := p.groups[t.Text]
		if err != nil || k < 0 || k >= len(g) {
			p.failf("%s%s is not a result of a group of results", t.Text, n.Text)
			return ""
		}
		return g[k]
	}
	return t.Text
}

// group names the n results of a group %name:n, which uses write %name#k.
func (p *parser) group(name string, n int) []string {
	if p.groups == nil {
		p.groups = map[string][]string{}
	}
	// %g<name>_<k>, with underscores added to the prefix until no name of the text starts
	// with it.
	base := "%g" + strings.TrimPrefix(name, "%") + "_"
	for strings.Contains(p.s.Src(), base) {
		base += "_"
	}
	out := make([]string, n)
	for k := range out {
		out[k] = base + strconv.Itoa(k)
	}
	p.groups[name] = out
	return out
}

// entryValue reads the value of a keyword entry: a list, an attribute with its angle
// brackets, a keyword, a number or a string.
func (p *parser) entryValue() string {
	t := p.s.Peek()
	switch {
	case t.Is(mlir.Punct, "[") || t.Is(mlir.Punct, "<") || t.Is(mlir.Punct, "{"):
		return p.balanced()
	case t.Is(mlir.Punct, "-"):
		p.next()
		return "-" + p.next().Text
	}
	p.next()
	end := t.End()
	if n := p.s.Peek(); n.Is(mlir.Punct, "<") && n.Off == end {
		p.balanced()
		end = p.s.Offset()
	}
	return p.s.Src()[t.Off:end]
}

// attrDict reads an optional attribute dictionary: entries that are the op's own (a name
// without a dialect prefix, for StableHLO's ops, when inherent is nil; else the names in
// inherent) go to its properties, the others stay attributes.
func (p *parser) attrDict(o *op, inherent ...string) {
	if !p.peekIs(mlir.Punct, "{") {
		return
	}
	for _, e := range splitTop(inner(p.balanced())) {
		name, _, _ := strings.Cut(e, " = ")
		name = strings.TrimSpace(name)
		own := !strings.Contains(name, ".") && !strings.HasPrefix(o.name, "chlo.")
		if inherent != nil {
			own = false
			for _, n := range inherent {
				own = own || n == name
			}
		}
		if own {
			o.props = joinEntries(o.props, e)
		} else {
			o.attrs = joinEntries(o.attrs, e)
		}
	}
}

// joinEntries appends entry e to a dictionary's entries.
func joinEntries(list, e string) string {
	switch {
	case list == "":
		return e
	case e == "":
		return list
	}
	return list + ", " + e
}

// splitTop splits an attribute dictionary's body at its top-level commas.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '[', '(', '{':
			depth++
		case '>', ']', ')', '}':
			if i > 0 && s[i] == '>' && s[i-1] == '-' {
				continue // "->" in a type
			}
			depth--
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// signature reads ": types": a function type, "T -> R", or one type shared by every
// operand and result. It returns the types of a list without an arrow ("T1, T2"), which
// the caller reads.
func (p *parser) signature(o *op) []typ {
	p.expect(mlir.Punct, ":")
	var ins []typ
	if p.peekIs(mlir.Punct, "(") {
		ins = p.typeList(false)
		p.expect(mlir.Punct, "->")
		o.ins, o.outs = ins, p.typeList(true)
		return nil
	}
	ins = []typ{p.typeText()}
	if p.peekIs(mlir.Punct, "->") {
		p.next()
		o.ins, o.outs = ins, p.typeList(true)
		return nil
	}
	for p.err == nil && p.peekIs(mlir.Punct, ",") {
		p.next()
		ins = append(ins, p.typeText())
	}
	if len(ins) > 1 {
		return ins
	}
	in := ins[0]
	if o.name == "stablehlo.complex" && strings.HasPrefix(in.dtype, "complex<") {
		// complex's one type is its result's: the operands are its parts.
		in = in.withDims(in.dims)
		in.dtype = strings.TrimSuffix(strings.TrimPrefix(in.dtype, "complex<"), ">")
	}
	for range o.operands {
		o.ins = append(o.ins, in)
	}
	for range o.results {
		o.outs = append(o.outs, ins[0])
	}
	if len(o.results) == 0 && len(o.operands) == 0 {
		o.outs = ins // an op of no operands whose one result is unnamed: an error the caller reports
	}
	return nil
}

// keyed returns the form "operands[, key = value ...] {attrs} : types" (StableHLO's
// elementwise ops, iota, broadcast_in_dim, ...), its entries made properties as entries says.
func keyed(entries map[string]entry) prettyForm {
	return func(p *parser, o *op) {
		var more bool
		o.operands, more = p.values()
		if len(o.operands) == 0 || more {
			p.entries(o, entries)
		}
		p.attrDict(o)
		if list := p.signature(o); list != nil {
			p.failf("%s: a list of types without an arrow", o.name)
		}
	}
}

// entries reads keyword entries "key = value" separated by commas.
func (p *parser) entries(o *op, entries map[string]entry) {
	for p.err == nil && p.s.Peek().Kind == mlir.Ident {
		key := p.next().Text
		p.expect(mlir.Punct, "=")
		v := p.entryValue()
		e, ok := entries[key]
		if !ok {
			p.unsupportedf("%s: the entry %q of its custom form", o.name, key)
			return
		}
		w, err := e.value(v)
		if err != nil {
			p.failf("%s: %s: %v", o.name, key, err)
			return
		}
		o.props = joinEntries(o.props, e.prop+" = "+w)
		if !p.peekIs(mlir.Punct, ",") {
			return
		}
		p.next()
	}
}

// constantForm: stablehlo.constant {attrs} value : type.
func (p *parser) constantForm(o *op) {
	p.attrDict(o)
	start := p.s.Peek().Off
	p.entryValue()
	v := strings.TrimSpace(p.s.Src()[start:p.s.Offset()])
	p.expect(mlir.Punct, ":")
	t := p.typeText()
	o.props = joinEntries("value = "+v+" : "+t.String(), o.props)
	o.outs = []typ{t}
}

// compareForm: stablehlo.compare DIR, lhs, rhs[, TYPE] {attrs} : types.
func (p *parser) compareForm(o *op) {
	dir := p.expect(mlir.Ident, "").Text
	p.expect(mlir.Punct, ",")
	var more bool
	o.operands, more = p.values()
	o.props = "comparison_direction = #stablehlo<comparison_direction " + dir + ">"
	if more {
		o.props = "compare_type = #stablehlo<comparison_type " + p.expect(mlir.Ident, "").Text + ">, " + o.props
	}
	p.attrDict(o)
	p.signature(o)
}

// dotGeneralForm: lhs, rhs, batching_dims = [..] x [..], contracting_dims = [..] x [..],
// precision = [..], algorithm = <..> {attrs} : types.
func (p *parser) dotGeneralForm(o *op) {
	o.operands, _ = p.values()
	var dims []string
	for p.err == nil && p.s.Peek().Kind == mlir.Ident {
		key := p.next().Text
		p.expect(mlir.Punct, "=")
		switch key {
		case "batching_dims", "contracting_dims":
			lhs := p.entryValue()
			p.expect(mlir.Ident, "x")
			rhs := p.entryValue()
			kind := strings.TrimSuffix(key, "_dims")
			dims = append(dims, "lhs_"+kind+"_dimensions = "+lhs, "rhs_"+kind+"_dimensions = "+rhs)
		case "precision":
			w, err := precisions(p.entryValue())
			if err != nil {
				p.failf("%s: %v", o.name, err)
			}
			o.props = joinEntries(o.props, "precision_config = "+w)
		case "algorithm":
			o.props = joinEntries(o.props, "algorithm = #stablehlo.dot_algorithm"+p.entryValue())
		default:
			p.unsupportedf("%s: the entry %q of its custom form", o.name, key)
		}
		if !p.peekIs(mlir.Punct, ",") {
			break
		}
		p.next()
	}
	// #stablehlo.dot writes its lists in this order, empty ones left out.
	var kept []string
	for _, want := range []string{"lhs_batching", "rhs_batching", "lhs_contracting", "rhs_contracting"} {
		for _, d := range dims {
			if strings.HasPrefix(d, want+"_") && !strings.HasSuffix(d, "[]") {
				kept = append(kept, d)
			}
		}
	}
	o.props = joinEntries("dot_dimension_numbers = #stablehlo.dot<"+strings.Join(kept, ", ")+">", o.props)
	p.attrDict(o)
	p.signature(o)
}

// reducePrecisionForm: x, format = e5m2 : types.
func (p *parser) reducePrecisionForm(o *op) {
	o.operands, _ = p.values()
	p.expect(mlir.Ident, "format")
	p.expect(mlir.Punct, "=")
	f := p.expect(mlir.Ident, "").Text
	var e, m int
	if _, err := fmt.Sscanf(f, "e%dm%d", &e, &m); err != nil {
		p.failf("%s: format %q", o.name, f)
		return
	}
	o.props = fmt.Sprintf("exponent_bits = %d : i32, mantissa_bits = %d : i32", e, m)
	p.attrDict(o)
	p.signature(o)
}

// sliceForm: x [start:limit:stride, ...] : types.
func (p *parser) sliceForm(o *op) {
	o.operands = []string{p.value()}
	p.expect(mlir.Punct, "[")
	var start, limit, strides []int
	num := func() int {
		t := p.next()
		n, err := strconv.Atoi(t.Text)
		if err != nil || t.Kind != mlir.Int {
			p.failf("%s: %q is not an index", o.name, t.Text)
		}
		return n
	}
	for p.err == nil && !p.peekIs(mlir.Punct, "]") {
		a := num()
		p.expect(mlir.Punct, ":")
		b, c := num(), 1
		if p.peekIs(mlir.Punct, ":") {
			p.next()
			c = num()
		}
		start, limit, strides = append(start, a), append(limit, b), append(strides, c)
		if p.peekIs(mlir.Punct, ",") {
			p.next()
		}
	}
	p.expect(mlir.Punct, "]")
	o.props = "limit_indices = " + arrayI64(limit) + ", start_indices = " + arrayI64(start) + ", strides = " + arrayI64(strides)
	p.attrDict(o)
	p.signature(o)
}

// tupleElementForm: t[index] : types.
func (p *parser) tupleElementForm(o *op) {
	o.operands = []string{p.value()}
	p.expect(mlir.Punct, "[")
	o.props = "index = " + p.expect(mlir.Int, "").Text + " : i32"
	p.expect(mlir.Punct, "]")
	p.attrDict(o)
	p.signature(o)
}

// tupleForm: values : tuple<...>; the operands have the tuple's element types.
func (p *parser) tupleForm(o *op) {
	o.operands, _ = p.values()
	p.attrDict(o, []string{}...) // tuple has no properties
	p.expect(mlir.Punct, ":")
	t := p.typeText()
	o.outs = []typ{t}
	body, ok := strings.CutPrefix(t.raw, "tuple<")
	if body, ok2 := strings.CutSuffix(body, ">"); ok && ok2 {
		for _, e := range splitTop(body) {
			et, err := parseType(e)
			if err != nil {
				p.failf("%s: %v", o.name, err)
				return
			}
			o.ins = append(o.ins, et)
		}
	}
}

// listTypedForm: select's "pred, T" (on_true, on_false and the result T) and
// optimization_barrier's "T1, T2" (operands and results alike), or a function type.
func (p *parser) listTypedForm(o *op) {
	o.operands, _ = p.values()
	p.attrDict(o)
	list := p.signature(o)
	switch {
	case list == nil:
	case o.name == "stablehlo.select" && len(list) == 2:
		o.ins, o.outs = []typ{list[0], list[1], list[1]}, []typ{list[1]}
	case o.name == "stablehlo.optimization_barrier":
		o.ins, o.outs = list, list
	default:
		p.failf("%s: types %v", o.name, list)
	}
}

// customCallForm: @target(operands) {attrs} : types.
func (p *parser) customCallForm(o *op) {
	target := p.expect(mlir.AtIdent, "")
	name, err := target.Symbol()
	if err != nil {
		p.failf("%s: target %s", o.name, target.Text)
	}
	p.expect(mlir.Punct, "(")
	o.operands, _ = p.values()
	p.expect(mlir.Punct, ")")
	o.props = "call_target_name = " + mlir.Quote(name)
	p.attrDict(o, "api_version", "backend_config", "called_computations", "has_side_effect", "operand_layouts",
		"result_layouts", "output_operand_aliases")
	p.signature(o)
}

// compositeForm: "name" operands {attrs} : types.
func (p *parser) compositeForm(o *op) {
	o.props = "name = " + p.expect(mlir.String, "").Text
	o.operands, _ = p.values()
	p.attrDict(o, "composite_attributes", "decomposition", "version")
	p.signature(o)
}

// callForm: @callee(operands) {attrs} : types.
func (p *parser) callForm(o *op) {
	callee := p.expect(mlir.AtIdent, "")
	p.expect(mlir.Punct, "(")
	o.operands, _ = p.values()
	p.expect(mlir.Punct, ")")
	o.props = "callee = " + callee.Text
	p.attrDict(o, "callee", "arg_attrs", "res_attrs", "no_inline")
	p.signature(o)
}

// returnForm: operands [: types], the terminator of a function or a region.
func (p *parser) returnForm(o *op) {
	o.operands, _ = p.values()
	p.attrDict(o)
	if len(o.operands) == 0 {
		return
	}
	p.expect(mlir.Punct, ":")
	for p.err == nil {
		o.ins = append(o.ins, p.typeText())
		if !p.peekIs(mlir.Punct, ",") {
			break
		}
		p.next()
	}
}

// shardingForm: x <@mesh, [...]> {attrs} : type (sdy.sharding_constraint, sdy.reshard).
func (p *parser) shardingForm(o *op) {
	o.operands = []string{p.value()}
	o.props = "sharding = #sdy.sharding" + p.entryValue()
	p.attrDict(o)
	p.signature(o)
}

// reduceForm: the compact "(x init: i), ... applies op across dimensions = [..] : types"
// and the full "(x init: i), ... across dimensions = [..] : types reducer(a, b) (c, d) {...}".
func (p *parser) reduceForm(o *op) {
	var inits []string
	for p.err == nil && p.peekIs(mlir.Punct, "(") {
		p.next()
		o.operands = append(o.operands, p.value())
		p.expect(mlir.Ident, "init")
		p.expect(mlir.Punct, ":")
		inits = append(inits, p.value())
		p.expect(mlir.Punct, ")")
		if !p.peekIs(mlir.Punct, ",") {
			break
		}
		p.next()
	}
	o.operands = append(o.operands, inits...)
	applies := ""
	if p.peekIs(mlir.Ident, "applies") {
		p.next()
		applies = p.expect(mlir.Ident, "").Text
	}
	p.expect(mlir.Ident, "across")
	p.expect(mlir.Ident, "dimensions")
	p.expect(mlir.Punct, "=")
	dims, err := i64s(p.entryValue())
	if err != nil {
		p.failf("%s: dimensions: %v", o.name, err)
	}
	o.props = "dimensions = " + dims
	p.attrDict(o)
	p.signature(o)
	if p.err != nil {
		return
	}
	n := len(inits)
	if applies != "" {
		// The body is one op of the reduced element types, applied to the accumulators and
		// the elements: ^bb0(acc..., x...): r = op(acc, x); return r.
		r := &region{label: "^bb0"}
		var res []string
		for k := 0; k < 2*n; k++ {
			r.args = append(r.args, arg{name: "%rd" + strconv.Itoa(k), t: o.ins[n+k%n]})
		}
		for k := 0; k < n; k++ {
			res = append(res, "%rd"+strconv.Itoa(2*n+k))
		}
		var ts []typ
		for k := 0; k < n; k++ {
			ts = append(ts, r.args[k].t)
		}
		var ops []string
		for _, a := range r.args {
			ops = append(ops, a.name)
		}
		r.ops = []*op{{results: res, name: applies, operands: ops, ins: append(slices.Clone(ts), ts...), outs: ts},
			{name: "stablehlo.return", operands: res, ins: ts}}
		o.regions = []*region{r}
		return
	}
	p.expect(mlir.Ident, "reducer")
	var accs, xs []arg
	for p.err == nil && p.peekIs(mlir.Punct, "(") {
		pair := p.argList()
		if len(pair) != 2 {
			p.failf("%s: a reducer pair of %d arguments", o.name, len(pair))
			return
		}
		accs, xs = append(accs, pair[0]), append(xs, pair[1])
	}
	r := p.region()
	if r != nil {
		r.label, r.args = "^bb0", append(accs, xs...)
		o.regions = []*region{r}
	}
}

// whileForm: (%iterArg = %init, ...) : types cond {...} do {...}.
func (p *parser) whileForm(o *op) {
	p.expect(mlir.Punct, "(")
	var names []string
	for p.err == nil && !p.peekIs(mlir.Punct, ")") {
		names = append(names, p.expect(mlir.PercentIdent, "").Text)
		p.expect(mlir.Punct, "=")
		o.operands = append(o.operands, p.value())
		if p.peekIs(mlir.Punct, ",") {
			p.next()
		}
	}
	p.expect(mlir.Punct, ")")
	p.attrDict(o)
	var ts []typ
	if len(names) > 0 {
		p.expect(mlir.Punct, ":")
		for p.err == nil {
			ts = append(ts, p.typeText())
			if !p.peekIs(mlir.Punct, ",") {
				break
			}
			p.next()
		}
	}
	if p.err == nil && len(ts) != len(names) {
		p.failf("%s: %d values and %d types", o.name, len(names), len(ts))
		return
	}
	o.ins, o.outs = ts, ts
	for _, kw := range []string{"cond", "do"} {
		p.expect(mlir.Ident, kw)
		r := p.region()
		if r == nil || p.err != nil {
			return
		}
		r.label = "^bb0"
		for i, n := range names {
			r.args = append(r.args, arg{name: n, t: ts[i]})
		}
		o.regions = append(o.regions, r)
	}
}

// manualForm: (operands) in_shardings=[...] out_shardings=[...] manual_axes={...}
// (block arguments) { body } : types.
func (p *parser) manualForm(o *op) {
	p.expect(mlir.Punct, "(")
	o.operands, _ = p.values()
	p.expect(mlir.Punct, ")")
	var props []string
	for _, key := range []string{"in_shardings", "out_shardings", "manual_axes"} {
		p.expect(mlir.Ident, key)
		p.expect(mlir.Punct, "=")
		v := p.balanced()
		if key == "manual_axes" {
			props = append(props, key+" = #sdy<manual_axes"+v+">")
		} else {
			props = append(props, key+" = #sdy.sharding_per_value<"+v+">")
		}
	}
	o.props = props[0] + ", " + props[2] + ", " + props[1]
	args := p.argList()
	r := p.region()
	if r != nil {
		r.label, r.args = "^bb0", args
		o.regions = []*region{r}
	}
	p.attrDict(o)
	p.signature(o)
}

// convForm: (lhs, rhs) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride =
// [..], pad = [[..], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]} {attrs} : types.
func (p *parser) convForm(o *op) {
	p.expect(mlir.Punct, "(")
	o.operands, _ = p.values()
	p.expect(mlir.Punct, ")")
	p.expect(mlir.Ident, "dim_numbers")
	p.expect(mlir.Punct, "=")
	start := p.s.Peek().Off
	p.balanced()
	p.expect(mlir.Ident, "x")
	p.balanced()
	p.expect(mlir.Punct, "->")
	p.balanced()
	o.props = "dimension_numbers = #stablehlo.conv<" + p.s.Src()[start:p.s.Offset()] + ">"
	if p.peekIs(mlir.Punct, ",") {
		p.next()
		p.expect(mlir.Ident, "window")
		p.expect(mlir.Punct, "=")
		w := p.balanced()
		if p.err != nil {
			return
		}
		for _, e := range splitTop(inner(w)) {
			key, v, _ := strings.Cut(e, " = ")
			var prop string
			var err error
			switch strings.TrimSpace(key) {
			case "stride":
				prop, err = i64s(v)
				prop = "window_strides = " + prop
			case "lhs_dilate":
				prop, err = i64s(v)
				prop = "lhs_dilation = " + prop
			case "rhs_dilate":
				prop, err = i64s(v)
				prop = "rhs_dilation = " + prop
			case "pad":
				prop, err = padding(v)
			case "reverse":
				prop, err = reversal(v)
			default:
				p.unsupportedf("%s: the window entry %q", o.name, key)
				return
			}
			if err != nil {
				p.failf("%s: window %s: %v", o.name, key, err)
				return
			}
			o.props = joinEntries(o.props, prop)
		}
	}
	p.attrDict(o)
	p.signature(o)
}

// padding writes a convolution's pad entry: [[1, 1], [0, 1]] -> padding = dense<[[1, 1], [0,
// 1]]> : tensor<2x2xi64>.
func padding(v string) (string, error) {
	body, ok := listBody(strings.TrimSpace(v))
	if !ok {
		return "", fmt.Errorf("%q is not a list", v)
	}
	rows := splitTop(body)
	for _, r := range rows {
		inner, ok := listBody(r)
		if !ok {
			return "", fmt.Errorf("%q is not a list of pairs", v)
		}
		if ints, ok := intList(inner); !ok || len(ints) != 2 {
			return "", fmt.Errorf("%q is not a list of pairs", v)
		}
	}
	return fmt.Sprintf("padding = dense<%s> : tensor<%dx2xi64>", strings.TrimSpace(v), len(rows)), nil
}

// reversal writes a convolution's reverse entry: [false, true] (or [0, 1]) ->
// window_reversal = array<i1: false, true>.
func reversal(v string) (string, error) {
	body, ok := listBody(strings.TrimSpace(v))
	if !ok {
		return "", fmt.Errorf("%q is not a list", v)
	}
	var out []string
	for _, f := range splitTop(body) {
		switch f {
		case "true", "1":
			out = append(out, "true")
		case "false", "0":
			out = append(out, "false")
		default:
			return "", fmt.Errorf("%q is not a list of booleans", v)
		}
	}
	if len(out) == 0 {
		return "window_reversal = array<i1>", nil
	}
	return "window_reversal = array<i1: " + strings.Join(out, ", ") + ">", nil
}
