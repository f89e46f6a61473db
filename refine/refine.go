package refine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shapes"
)

// Errors of Module, matched with errors.Is.
var (
	// ErrSyntax: the text is not a module MLIR reads (generic or custom forms).
	ErrSyntax = errors.New("refine: cannot read the module")
	// ErrArguments: the argument shapes do not fit @main's types (count, element type, rank,
	// or a static dimension that differs).
	ErrArguments = errors.New("refine: arguments do not match")
	// ErrShapeAssertion: a shape assertion of the module failed for these shapes; the error
	// says what JAX says (its error_message, with the dimension values filled in).
	ErrShapeAssertion = errors.New("shape assertion failed")
	// ErrUnsupported: the module has an op whose dynamic shape refinement does not know, or
	// an op written in a custom form the parser does not read (pretty.go).
	ErrUnsupported = errors.New("refine: not refined")
)

// maxConst bounds the integer tensors whose contents refinement follows (shapes and their
// arithmetic are scalars and short vectors).
const maxConst = 64

// maxGroup bounds the results of one op written as a group (%0:N).
const maxGroup = 1 << 16

// Module returns text, a StableHLO module with dynamic dimensions ("?"), such as jax.export
// writes for symbolic shapes, refined for @main arguments of the given shapes: what JAX's
// refine_polymorphic_shapes does before compiling. text is the generic form that
// mlir/bytecode.ToText writes, or the module as JAX prints it (Exported.mlir_module(): the
// custom forms of StableHLO's, Shardy's and func's ops, with locations, which are dropped);
// the result is the generic form. Every dynamic dimension becomes static; stablehlo.get_dimension_size
// and the integer arithmetic on it are followed; dynamic_broadcast_in_dim, dynamic_reshape,
// dynamic_iota, dynamic_gather, dynamic_pad and real_dynamic_slice, and JAX's custom calls
// stablehlo.dynamic_reduce_window, dynamic_top_k, dynamic_approx_top_k and
// dynamic_rng_bit_generator, become their static ops; JAX's shape assertions (custom_call @shape_assertion) are checked, and a failing
// one is an error wrapping ErrShapeAssertion with JAX's message; private functions are
// specialized per call. The result has static types only.
func Module(text string, args []shapes.Shape) (string, error) {
	m, err := parseModule(text)
	if err != nil {
		return "", err
	}
	main := m.funcs["main"]
	if main == nil {
		return "", fmt.Errorf("%w: no @main", ErrSyntax)
	}
	if len(args) != len(main.args) {
		return "", fmt.Errorf("%w: %d arguments for @main's %d", ErrArguments, len(args), len(main.args))
	}
	in := make([]typ, len(args))
	for i, s := range args {
		a := main.args[i].t
		if !a.tensor() || a.dtype != shapes.MLIRName(s.DType()) || len(a.dims) != s.Rank() {
			return "", fmt.Errorf("%w: argument %d is %s, @main takes %s", ErrArguments, i, s, a)
		}
		for d, n := range a.dims {
			if n >= 0 && n != s.Dim(d) {
				return "", fmt.Errorf("%w: argument %d is %s, @main takes %s", ErrArguments, i, s, a)
			}
		}
		in[i] = a.withDims(s.Dims())
	}
	r := &refiner{m: m, made: map[string]*function{}}
	f, err := r.function(main, "main", in, make([][]int64, len(in)))
	if err != nil {
		return "", err
	}
	// The refined functions replace the originals: @main where it was, the specializations
	// of the private functions where their originals were, in the order they were made.
	var pieces []any
	for _, piece := range m.pieces {
		g, ok := piece.(*function)
		switch {
		case !ok:
			pieces = append(pieces, piece)
		case g == main:
			pieces = append(pieces, f)
		default:
			for _, s := range r.order {
				if r.origin[s] == g {
					pieces = append(pieces, s)
				}
			}
		}
	}
	m.pieces = pieces
	out := m.print()
	if at, ok := dynamicType(out); ok {
		// Refinement rewrites the types it reads; one it does not read (inside an
		// attribute, say) would reach XLA still dynamic.
		return "", fmt.Errorf("%w: a dynamic type is left after refinement: %s", ErrUnsupported, at)
	}
	return out, nil
}

// dynamicType reports whether text holds a dynamic dimension, a "?" right inside angle
// brackets (tensor<?x4xf32>), outside string literals, and returns the line it is on. A "?"
// in other brackets (Shardy's open dimensions, {?}) is not a dimension.
func dynamicType(text string) (string, bool) {
	s := mlir.NewScanner(text)
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		if !t.Is(mlir.Punct, "?") || s.Depth() == 0 {
			continue
		}
		if text[s.Open(s.Depth()-1)] != '<' {
			continue
		}
		start := strings.LastIndexByte(text[:t.Off], '\n') + 1
		end := strings.IndexByte(text[t.Off:], '\n')
		if end < 0 {
			end = len(text) - t.Off
		}
		return strings.TrimSpace(text[start : t.Off+end]), true
	}
	return "", false
}

// refiner refines the functions of a module, specializing each private function per
// distinct argument types and known contents.
type refiner struct {
	m      *module
	made   map[string]*function // by specialization key
	order  []*function
	origin map[*function]*function
	depth  int
	fresh  int // numbers the values refinement adds
}

// name returns a new SSA name for a value refinement adds.
func (r *refiner) name() string {
	r.fresh++
	return "%rf" + strconv.Itoa(r.fresh)
}

// env is what refinement knows of a function's values: their types and, for small integer
// tensors, their contents.
type env struct {
	types  map[string]typ
	consts map[string][]int64
	defs   map[string]*op // the refined op that defines each result
	r      *refiner
}

// function refines f for arguments of types in (with known contents consts) under the name
// name.
func (r *refiner) function(f *function, name string, in []typ, consts [][]int64) (*function, error) {
	if r.depth++; r.depth > 64 {
		return nil, fmt.Errorf("%w: calls nested more than 64 deep", ErrUnsupported)
	}
	defer func() { r.depth-- }()
	e := &env{types: map[string]typ{}, consts: map[string][]int64{}, defs: map[string]*op{}, r: r}
	out := &function{visibility: f.visibility, name: name}
	for i, a := range f.args {
		e.types[a.name] = in[i]
		if consts[i] != nil {
			e.consts[a.name] = consts[i]
		}
		out.args = append(out.args, arg{name: a.name, t: in[i], attrs: a.attrs})
	}
	body, err := r.block(e, f.body.ops, "@"+f.name)
	if err != nil {
		return nil, err
	}
	out.body = &region{ops: body}
	if len(body) == 0 {
		return nil, fmt.Errorf("%w: @%s has no func.return", ErrSyntax, f.name)
	}
	ret := body[len(body)-1]
	if ret.name != "func.return" || len(ret.ins) != len(f.results) {
		return nil, fmt.Errorf("%w: @%s does not end with func.return of its %d results", ErrSyntax, f.name, len(f.results))
	}
	for i, t := range ret.ins {
		out.results = append(out.results, arg{t: t, attrs: f.results[i].attrs})
		out.consts = append(out.consts, e.consts[ret.operands[i]])
	}
	return out, nil
}

// block refines the ops of a block in order, dropping the shape assertions it checks.
func (r *refiner) block(e *env, ops []*op, where string) ([]*op, error) {
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: %s: an empty block", ErrSyntax, where)
	}
	var out []*op
	for _, o := range ops {
		n, err := r.op(e, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, o.name, err)
		}
		if n != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// op refines one op: its operands' types are known; it returns the op to print (nil to drop
// it) after recording its results' types and contents in e.
func (r *refiner) op(e *env, o *op) (*op, error) {
	n := *o
	n.ins = make([]typ, len(o.operands))
	ins := make([][]int64, len(o.operands))
	for i, v := range o.operands {
		t, ok := e.types[v]
		if !ok {
			return nil, fmt.Errorf("%w: operand %s is not defined before", ErrSyntax, v)
		}
		n.ins[i], ins[i] = t, e.consts[v]
	}
	n.outs = slices.Clone(o.outs)
	var outConst []int64
	var outConsts [][]int64 // per result, for ops of several
	base := strings.TrimPrefix(o.name, "stablehlo.")
	switch {
	case o.name == "stablehlo.custom_call" && customTarget(o) == "shape_assertion":
		return nil, shapeAssertion(o, ins)
	case o.name == "func.call":
		c, err := r.call(e, &n, ins)
		if err != nil {
			return nil, err
		}
		outConsts = c
	case len(o.regions) > 0:
		if err := r.regions(e, &n, base); err != nil {
			return nil, err
		}
	case o.name == "stablehlo.custom_call" && customTarget(o) == "stablehlo.dynamic_reduce_window":
		if err := r.dynamicReduceWindow(e, &n, ins); err != nil {
			return nil, err
		}
	case o.name == "stablehlo.custom_call" && customTarget(o) == "stablehlo.dynamic_top_k":
		if err := dynamicTopK(&n, ins); err != nil {
			return nil, err
		}
	case o.name == "stablehlo.custom_call" && customTarget(o) == "stablehlo.dynamic_approx_top_k":
		if err := r.dynamicApproxTopK(&n, ins); err != nil {
			return nil, err
		}
	case o.name == "stablehlo.custom_call" && customTarget(o) == "stablehlo.dynamic_rng_bit_generator":
		if err := dynamicRng(&n, ins); err != nil {
			return nil, err
		}
	case o.name == "stablehlo.real_dynamic_slice" && len(ins) > 1 && !knownAll(ins[1:]):
		if err := r.sliceByOffsets(e, &n, ins); err != nil {
			return nil, err
		}
	default:
		c, err := rule(&n, base, ins)
		if err != nil {
			return nil, err
		}
		outConst = c
	}
	for i, t := range n.outs {
		if t.tensor() && !t.static() {
			return nil, fmt.Errorf("%w: result %d stays %s", ErrUnsupported, i, t)
		}
		e.types[n.results[i]] = t
		e.defs[n.results[i]] = &n
	}
	if outConst != nil && len(n.results) == 1 {
		e.consts[n.results[0]] = outConst
	}
	for i, c := range outConsts {
		if c != nil {
			e.consts[n.results[i]] = c
		}
	}
	return &n, nil
}

// customTarget returns a custom call's call_target_name.
func customTarget(o *op) string {
	v, _ := propValue(o.props, "call_target_name")
	s, err := strconv.Unquote(v)
	if err != nil {
		return v
	}
	return s
}

// shapeAssertion checks JAX's shape assertion: custom_call @shape_assertion(pred, values...)
// with error_message, in which {0}, {1}, ... stand for the values.
func shapeAssertion(o *op, ins [][]int64) error {
	if len(ins) == 0 || len(ins[0]) != 1 {
		return fmt.Errorf("%w: a shape assertion whose predicate is not known", ErrUnsupported)
	}
	if ins[0][0] != 0 {
		return nil
	}
	msg, _ := propValue(o.attrs, "error_message")
	if s, err := strconv.Unquote(msg); err == nil {
		msg = s
	}
	for i, v := range ins[1:] {
		val := "?"
		if len(v) == 1 {
			val = strconv.FormatInt(v[0], 10)
		}
		msg = strings.ReplaceAll(msg, "{"+strconv.Itoa(i)+"}", val)
	}
	return fmt.Errorf("%w: %s", ErrShapeAssertion, msg)
}

// call refines a func.call by refining (specializing) its callee for the call's operands.
func (r *refiner) call(e *env, n *op, ins [][]int64) ([][]int64, error) {
	v, _ := propValue(n.props, "callee")
	name := strings.TrimPrefix(v, "@")
	if s, err := strconv.Unquote(name); err == nil {
		name = s
	}
	f := r.m.funcs[name]
	if f == nil {
		return nil, fmt.Errorf("%w: callee @%s is not a function of the module", ErrSyntax, name)
	}
	if len(f.args) != len(n.ins) {
		return nil, fmt.Errorf("%w: @%s takes %d arguments, the call passes %d", ErrSyntax, name, len(f.args), len(n.ins))
	}
	g, err := r.specialize(name, f, n.ins, ins)
	if err != nil {
		return nil, err
	}
	n.props = strings.Replace(n.props, "callee = "+v, "callee = "+mlir.Symbol(g.name), 1)
	n.outs = nil
	for _, a := range g.results {
		n.outs = append(n.outs, a.t)
	}
	if len(n.outs) != len(n.results) {
		return nil, fmt.Errorf("%w: @%s returns %d values, the call takes %d", ErrSyntax, name, len(n.outs), len(n.results))
	}
	return g.consts, nil
}

// specialize returns function f (named name) refined for arguments of types in with known
// contents ins, made once per distinct types and contents.
func (r *refiner) specialize(name string, f *function, in []typ, ins [][]int64) (*function, error) {
	var key strings.Builder
	key.WriteString(name)
	for i, t := range in {
		fmt.Fprintf(&key, "|%s=%v", t, ins[i])
	}
	g := r.made[key.String()]
	if g == nil {
		// The first specialization keeps the callee's name, the next ones get a suffix.
		newName := name
		for k := 1; r.named(newName); k++ {
			newName = name + "_" + strconv.Itoa(k)
		}
		var err error
		if g, err = r.function(f, newName, in, ins); err != nil {
			return nil, err
		}
		r.made[key.String()] = g
		if r.origin == nil {
			r.origin = map[*function]*function{}
		}
		r.origin[g] = f
		r.order = append(r.order, g)
	}
	return g, nil
}

// named reports whether a specialization already has name.
func (r *refiner) named(name string) bool {
	for _, g := range r.order {
		if g.name == name {
			return true
		}
	}
	return false
}

// regions refines an op with regions: while (loop-carried types are its operands'), if and
// case (results from the branches), and the ops whose regions are scalar bodies (reduce,
// sort, scatter, reduce_window, select_and_scatter, all_reduce...), whose results follow from
// their operands.
func (r *refiner) regions(e *env, n *op, base string) error {
	var err error
	refined := make([]*region, len(n.regions))
	for i, reg := range n.regions {
		nr := &region{label: reg.label}
		for j, a := range reg.args {
			t := a.t
			if base == "while" {
				if j >= len(n.ins) {
					return fmt.Errorf("%w: while region %d has %d arguments for %d operands", ErrSyntax, i, len(reg.args), len(n.ins))
				}
				t = n.ins[j]
			}
			if t.tensor() && !t.static() {
				return fmt.Errorf("%w: region %d argument %d of type %s", ErrUnsupported, i, j, t)
			}
			e.types[a.name] = t
			nr.args = append(nr.args, arg{name: a.name, t: t, attrs: a.attrs})
		}
		if nr.ops, err = r.block(e, reg.ops, "region "+strconv.Itoa(i)); err != nil {
			return err
		}
		refined[i] = nr
	}
	n.regions = refined
	for i, reg := range refined {
		if len(reg.ops) == 0 {
			return fmt.Errorf("%w: region %d has no terminator", ErrSyntax, i)
		}
	}
	ret := func(i int) []typ { return refined[i].ops[len(refined[i].ops)-1].ins }
	switch {
	case base == "while" && len(refined) != 2, (base == "if" || base == "case") && len(refined) == 0:
		return fmt.Errorf("%w: %s with %d regions", ErrSyntax, n.name, len(refined))
	}
	switch base {
	case "while":
		n.outs = slices.Clone(n.ins)
		for i, t := range ret(1) {
			if i >= len(n.ins) || !t.equal(n.ins[i]) {
				return fmt.Errorf("%w: the loop body changes the type of value %d to %s", ErrUnsupported, i, t)
			}
		}
	case "if", "case":
		n.outs = ret(0)
		for i := range refined[1:] {
			if !slices.EqualFunc(ret(i+1), n.outs, typ.equal) {
				return fmt.Errorf("%w: the branches return different types", ErrUnsupported)
			}
		}
	default:
		if _, err := rule(n, base, make([][]int64, len(n.ins))); err != nil {
			return err
		}
	}
	return nil
}

// Signature returns the types of @main's arguments and results in text (as Module reads it),
// a dynamic dimension as -1, and the module's mhlo.num_partitions (1 when it does not say).
func Signature(text string) (args, results []shapes.Shape, partitions int, err error) {
	m, err := parseModule(text)
	if err != nil {
		return nil, nil, 0, err
	}
	main := m.funcs["main"]
	if main == nil {
		return nil, nil, 0, fmt.Errorf("%w: no @main", ErrSyntax)
	}
	conv := func(as []arg) ([]shapes.Shape, error) {
		out := make([]shapes.Shape, len(as))
		for i, a := range as {
			d, err := shapes.ParseDType(a.t.dtype)
			if !a.t.tensor() || err != nil {
				return nil, fmt.Errorf("%w: @main has a value of type %s", ErrUnsupported, a.t)
			}
			out[i] = shapes.Make(d, a.t.dims...)
		}
		return out, nil
	}
	if args, err = conv(main.args); err != nil {
		return nil, nil, 0, err
	}
	if results, err = conv(main.results); err != nil {
		return nil, nil, 0, err
	}
	partitions = 1
	if v, ok := propValue(m.head, "mhlo.num_partitions"); ok {
		if n, ok := propInts("k = "+v, "k"); ok && len(n) == 1 && n[0] > 0 {
			partitions = n[0]
		}
	}
	return args, results, partitions, nil
}

// Polymorphic reports whether text is a module with dynamic dimensions for Module to refine:
// JAX marks such modules jax.uses_shape_polymorphism = true, and their @main types have "?".
func Polymorphic(text string) bool {
	head, _, _ := strings.Cut(text, "{\n")
	if strings.Contains(head, "jax.uses_shape_polymorphism = true") {
		return true
	}
	_, main, ok := strings.Cut(text, "@main(")
	main, _, _ = strings.Cut(main, "\n")
	return ok && (strings.Contains(main, "<?") || strings.Contains(main, "x?"))
}

// knownAll reports whether every one of cs is known.
func knownAll(cs [][]int64) bool {
	for _, c := range cs {
		if c == nil {
			return false
		}
	}
	return true
}

// sliceByOffsets refines real_dynamic_slice(x, start, limit, strides) whose start is computed
// at run time (an index into a loop's slice) but whose limit is start plus a known size, with
// strides of 1: StableHLO's canonical dynamic_slice(x, start[0], start[1], ...) of those
// sizes, the start vector split into scalars.
func (r *refiner) sliceByOffsets(e *env, n *op, ins [][]int64) error {
	if len(n.operands) != 4 || len(n.outs) != 1 || !n.ins[1].tensor() {
		return fmt.Errorf("%w: real_dynamic_slice with %d operands", ErrSyntax, len(n.operands))
	}
	start, limit := n.operands[1], n.operands[2]
	def := e.defs[limit]
	var sizes []int64
	if def != nil && def.name == "stablehlo.add" && len(def.operands) == 2 {
		switch {
		case def.operands[0] == start:
			sizes = e.consts[def.operands[1]]
		case def.operands[1] == start:
			sizes = e.consts[def.operands[0]]
		}
	}
	if sizes == nil || ins[3] == nil {
		return fmt.Errorf("%w: real_dynamic_slice whose sizes (limit - start) are not known", ErrUnsupported)
	}
	for _, s := range ins[3] {
		if s != 1 {
			return fmt.Errorf("%w: real_dynamic_slice with strides %v and indices known only at run time", ErrUnsupported, ins[3])
		}
	}
	st := n.ins[1]
	scalar := st.withDims(nil)
	var pre []*op
	operands := []string{n.operands[0]}
	ins2 := []typ{n.ins[0]}
	for i := range sizes {
		one, s := r.name(), r.name()
		pre = append(pre,
			&op{results: []string{one}, name: "stablehlo.slice", operands: []string{start},
				props: fmt.Sprintf("limit_indices = array<i64: %d>, start_indices = array<i64: %d>, strides = array<i64: 1>", i+1, i),
				ins:   []typ{st}, outs: []typ{st.withDims([]int{1})}},
			&op{results: []string{s}, name: "stablehlo.reshape", operands: []string{one}, ins: []typ{st.withDims([]int{1})}, outs: []typ{scalar}})
		operands = append(operands, s)
		ins2 = append(ins2, scalar)
		e.types[one], e.types[s] = st.withDims([]int{1}), scalar
	}
	dims := make([]int, len(sizes))
	for i, s := range sizes {
		dims[i] = int(s)
	}
	n.pre = append(n.pre, pre...)
	n.name, n.operands, n.ins = "stablehlo.dynamic_slice", operands, ins2
	n.props = "slice_sizes = " + arrayI64(dims)
	n.outs[0] = n.outs[0].withDims(dims)
	return nil
}

// dynamicReduceWindow refines JAX's custom_call @stablehlo.dynamic_reduce_window(xs...,
// inits..., window_dimensions, window_strides, base_dilations, window_dilations, padding),
// whose reducer is its called computation, into stablehlo.reduce_window with those known
// parameters and the reducer's body as its region.
func (r *refiner) dynamicReduceWindow(e *env, n *op, ins [][]int64) error {
	// Operands: the inputs, their initial values, then window_dimensions, window_strides,
	// base_dilations, window_dilations and padding.
	m := len(n.operands) - 5
	if m < 2 || m%2 != 0 || !knownAll(ins[m:]) {
		return fmt.Errorf("%w: dynamic_reduce_window whose window parameters are not known", ErrUnsupported)
	}
	ins = ins[m-2:] // the window parameters at 2..6, as for one input
	v, _ := propValue(n.props, "called_computations")
	name := strings.Trim(v, "[]@\" ")
	f := r.m.funcs[name]
	if f == nil || len(f.body.ops) == 0 {
		return fmt.Errorf("%w: dynamic_reduce_window's reducer @%s is not a function of the module", ErrSyntax, name)
	}
	ints := func(c []int64) string {
		s := make([]int, len(c))
		for i, x := range c {
			s[i] = int(x)
		}
		return arrayI64(s)
	}
	rank := len(n.ins[0].dims)
	var pad []string
	for i := 0; i+1 < len(ins[6]); i += 2 {
		pad = append(pad, fmt.Sprintf("[%d, %d]", ins[6][i], ins[6][i+1]))
	}
	n.name = "stablehlo.reduce_window"
	n.props = fmt.Sprintf("base_dilations = %s, padding = dense<[%s]> : tensor<%dx2xi64>, window_dilations = %s, "+
		"window_dimensions = %s, window_strides = %s", ints(ins[4]), strings.Join(pad, ", "), rank, ints(ins[5]), ints(ins[2]), ints(ins[3]))
	n.attrs = ""
	n.operands, n.ins = n.operands[:m], n.ins[:m]
	// The reducer's body, renamed so that its values do not meet the caller's.
	body := &region{label: "^bb0"}
	rename := map[string]string{}
	for _, a := range f.args {
		rename[a.name] = r.name()
		body.args = append(body.args, arg{name: rename[a.name], t: a.t})
	}
	for _, o := range f.body.ops {
		c := *o
		c.operands = make([]string, len(o.operands))
		for i, x := range o.operands {
			if y, ok := rename[x]; ok {
				c.operands[i] = y
			} else {
				return fmt.Errorf("%w: the reducer @%s uses %s from outside it", ErrUnsupported, name, x)
			}
		}
		c.results = make([]string, len(o.results))
		for i, x := range o.results {
			rename[x] = r.name()
			c.results[i] = rename[x]
		}
		if len(o.regions) > 0 {
			return fmt.Errorf("%w: a reducer with regions", ErrUnsupported)
		}
		if c.name == "func.return" {
			c.name = "stablehlo.return"
		}
		body.ops = append(body.ops, &c)
	}
	n.regions = []*region{body}
	return r.regions(e, n, "reduce_window")
}

// dynamicTopK refines custom_call @stablehlo.dynamic_top_k(x, k) with k known into the top_k
// XLA recomposes (custom_call @mhlo.topk, as JAX writes lax.top_k): the last dimension of
// both results becomes k.
func dynamicTopK(n *op, ins [][]int64) error {
	if len(n.operands) != 2 || len(ins[1]) != 1 || len(n.outs) != 2 || len(n.ins[0].dims) == 0 {
		return fmt.Errorf("%w: dynamic_top_k whose k is not known", ErrUnsupported)
	}
	k := int(ins[1][0])
	last := len(n.ins[0].dims) - 1
	if k < 0 || k > n.ins[0].dims[last] {
		return fmt.Errorf("%w: top_k of %d of a dimension of %d", ErrArguments, k, n.ins[0].dims[last])
	}
	dims := slices.Clone(n.ins[0].dims)
	dims[last] = k
	n.props = `call_target_name = "mhlo.topk"`
	n.attrs = fmt.Sprintf("mhlo.attributes = {k = %d : i64, largest = true}, mhlo.version = 1 : i64", k)
	n.operands, n.ins = n.operands[:1], n.ins[:1]
	n.outs[0], n.outs[1] = n.outs[0].withDims(dims), n.outs[1].withDims(slices.Clone(dims))
	return nil
}

// dynamicRng refines custom_call @stablehlo.dynamic_rng_bit_generator(state, shape) with the
// shape known into stablehlo.rng_bit_generator.
func dynamicRng(n *op, ins [][]int64) error {
	if len(n.operands) != 2 || ins[1] == nil || len(n.outs) != 2 {
		return fmt.Errorf("%w: dynamic_rng_bit_generator whose shape is not known", ErrUnsupported)
	}
	alg, ok := propValue(n.attrs, "rng_algorithm")
	if !ok {
		alg = "#stablehlo<rng_algorithm DEFAULT>"
	}
	shape := make([]int, len(ins[1]))
	for i, d := range ins[1] {
		shape[i] = int(d)
	}
	n.name, n.props, n.attrs = "stablehlo.rng_bit_generator", "rng_algorithm = "+alg, ""
	n.operands, n.ins = n.operands[:1], n.ins[:1]
	n.outs[0], n.outs[1] = n.ins[0], n.outs[1].withDims(shape)
	return nil
}

// dynamicApproxTopK refines custom_call @stablehlo.dynamic_approx_top_k(operands..., inits...,
// k, shapes...) with k and the result shapes known into the custom_call @ApproxTopK XLA
// lowers (what StableHLO's dynamism canonicalization makes of it): the operands and their
// initial values, top_k = k in mhlo.backend_config, the comparator kept.
func (r *refiner) dynamicApproxTopK(n *op, ins [][]int64) error {
	k := len(n.outs)
	if k == 0 || len(n.operands) != 3*k+1 || len(ins[2*k]) != 1 {
		return fmt.Errorf("%w: dynamic_approx_top_k of %d operands and %d results, or whose k is not known", ErrUnsupported, len(n.operands), k)
	}
	top := ins[2*k][0]
	for i := range k {
		shape, err := knownShape(n, ins, 2*k+1+i)
		if err != nil {
			return err
		}
		if len(shape) != len(n.outs[i].dims) {
			return fmt.Errorf("%w: dynamic_approx_top_k result %d of rank %d, its shape operand says %v", ErrSyntax, i, len(n.outs[i].dims), shape)
		}
		n.outs[i] = n.outs[i].withDims(shape)
	}
	cfg, ok := propValue(n.attrs, "mhlo.backend_config")
	if !ok || !strings.HasPrefix(cfg, "{") || strings.Contains(cfg, "top_k = ") {
		return fmt.Errorf("%w: dynamic_approx_top_k's mhlo.backend_config %q", ErrSyntax, cfg)
	}
	newCfg := "{" + joinEntries(strings.TrimSpace(cfg[1:len(cfg)-1]), fmt.Sprintf("top_k = %d : i64", top)) + "}"
	var attrs []string
	for _, a := range splitTop(n.attrs) {
		switch {
		case strings.HasPrefix(a, "indices_of_shape_operands "):
		case strings.HasPrefix(a, "mhlo.backend_config "):
			attrs = append(attrs, "mhlo.backend_config = "+newCfg)
		default:
			attrs = append(attrs, a)
		}
	}
	n.attrs = strings.Join(attrs, ", ")
	n.props = strings.Replace(n.props, `"stablehlo.dynamic_approx_top_k"`, `"ApproxTopK"`, 1)
	n.operands, n.ins = n.operands[:2*k], n.ins[:2*k]
	// The comparator, a function of scalars, is kept (as a specialization of itself).
	v, _ := propValue(n.props, "called_computations")
	for _, c := range splitTop(strings.Trim(v, "[]")) {
		name := strings.TrimPrefix(c, "@")
		f := r.m.funcs[name]
		if f == nil {
			return fmt.Errorf("%w: the comparator %s is not a function of the module", ErrSyntax, c)
		}
		in := make([]typ, len(f.args))
		for i, a := range f.args {
			in[i] = a.t
		}
		g, err := r.specialize(name, f, in, make([][]int64, len(in)))
		if err != nil {
			return err
		}
		if g.name != name {
			return fmt.Errorf("%w: the comparator %s", ErrUnsupported, c)
		}
	}
	return nil
}
