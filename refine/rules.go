package refine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// elementwise are the ops whose result has the dimensions of their operands of its rank.
var elementwise = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`abs add and atan2 bitcast_convert cbrt ceil clamp compare complex convert
		cosine count_leading_zeros divide exponential exponential_minus_one floor imag is_finite log
		log_plus_one logistic maximum minimum multiply negate not or popcnt power real reduce_precision
		remainder round_nearest_afz round_nearest_even rsqrt select shift_left shift_right_arithmetic
		shift_right_logical sign sine sqrt subtract tan tanh xor optimization_barrier stochastic_convert
		uniform_quantize uniform_dequantize reverse`) {
		elementwise[n] = true
	}
}

// minOperands is the operand count the rules of these ops read.
var minOperands = map[string]int{
	"dynamic_broadcast_in_dim": 2, "dynamic_reshape": 2, "dynamic_iota": 1, "real_dynamic_slice": 4, "dynamic_pad": 5,
	"dynamic_gather": 3, "broadcast_in_dim": 1, "transpose": 1, "reduce": 2, "concatenate": 1, "dot_general": 2,
	"slice": 1, "pad": 2, "gather": 2, "reduce_window": 2, "get_dimension_size": 1, "convert": 1, "reshape": 1,
	"select": 3, "clamp": 3, "compare": 2, "add": 2, "subtract": 2, "multiply": 2, "divide": 2, "remainder": 2,
	"maximum": 2, "minimum": 2, "and": 2, "or": 2, "xor": 2, "negate": 1, "not": 1, "abs": 1, "sign": 1,
	"dynamic_update_slice": 1, "select_and_scatter": 1, "scatter": 1, "sort": 1, "convolution": 2, "dynamic_conv": 3,
}

// rule gives n's results their refined types (n.outs) from its operands' (n.ins), rewriting a
// dynamic op to its static form, and returns the contents of an integer result it can compute
// from known operands (ins), for the shape arithmetic.
func rule(n *op, base string, ins [][]int64) ([]int64, error) {
	if min, ok := minOperands[base]; ok && (len(n.ins) < min || len(n.outs) == 0) {
		return nil, fmt.Errorf("%w: %s with %d operands and %d results", ErrSyntax, n.name, len(n.ins), len(n.outs))
	}
	if len(n.outs) == 0 {
		return nil, nil // return, and custom calls without results: nothing to refine
	}
	for _, t := range n.ins {
		if !t.tensor() && (elementwise[base] || minOperands[base] > 0) {
			return nil, fmt.Errorf("%w: %s of a %s", ErrUnsupported, n.name, t)
		}
	}
	c, err := fold(n, base, ins)
	if err != nil || n.outsStatic() && !strings.HasPrefix(base, "dynamic_") && base != "real_dynamic_slice" {
		return c, err
	}
	switch base {
	case "dynamic_broadcast_in_dim", "dynamic_reshape", "dynamic_iota":
		// The shape is the last operand.
		shape, err := knownShape(n, ins, len(n.ins)-1)
		if err != nil {
			return nil, err
		}
		if len(shape) != len(n.outs[0].dims) {
			return nil, fmt.Errorf("%w: %s to a shape of %d dimensions, the op says %d", ErrSyntax, n.name, len(shape), len(n.outs[0].dims))
		}
		for _, d := range shape {
			if d < 0 {
				return nil, fmt.Errorf("%w: %s to the shape %v", ErrArguments, n.name, shape)
			}
		}
		n.outs[0] = n.outs[0].withDims(shape)
		switch base {
		case "dynamic_broadcast_in_dim":
			dims, _ := propInts(n.props, "broadcast_dimensions")
			n.name, n.props = "stablehlo.broadcast_in_dim", "broadcast_dimensions = "+arrayI64(dims)
		case "dynamic_reshape":
			n.name, n.props = "stablehlo.reshape", ""
		case "dynamic_iota":
			d, ok := propInts(n.props, "iota_dimension")
			if !ok || len(d) != 1 || d[0] < 0 || d[0] >= len(shape) {
				return nil, fmt.Errorf("%w: dynamic_iota's iota_dimension", ErrSyntax)
			}
			n.name, n.props = "stablehlo.iota", fmt.Sprintf("iota_dimension = %d : i64", d[0])
		}
		n.operands, n.ins = n.operands[:len(n.operands)-1], n.ins[:len(n.ins)-1]
		return c, nil
	case "real_dynamic_slice":
		start, err1 := knownShape(n, ins, 1)
		limit, err2 := knownShape(n, ins, 2)
		strides, err3 := knownShape(n, ins, 3)
		if err := firstErr(err1, err2, err3); err != nil {
			return nil, err
		}
		n.name = "stablehlo.slice"
		n.props = "limit_indices = " + arrayI64(limit) + ", start_indices = " + arrayI64(start) + ", strides = " + arrayI64(strides)
		n.operands, n.ins = n.operands[:1], n.ins[:1]
		return c, sliceRule(n, start, limit, strides)
	case "dynamic_pad":
		lo, err1 := knownShape(n, ins, 2)
		hi, err2 := knownShape(n, ins, 3)
		in, err3 := knownShape(n, ins, 4)
		if err := firstErr(err1, err2, err3); err != nil {
			return nil, err
		}
		n.name = "stablehlo.pad"
		n.props = "edge_padding_high = " + arrayI64(hi) + ", edge_padding_low = " + arrayI64(lo) + ", interior_padding = " + arrayI64(in)
		n.operands, n.ins = n.operands[:2], n.ins[:2]
		return c, padRule(n, lo, hi, in)
	case "dynamic_conv":
		pad, err := knownShape(n, ins, 2)
		if err != nil {
			return nil, err
		}
		spatial := len(pad) / 2
		rows := make([]string, spatial)
		for i := range rows {
			rows[i] = fmt.Sprintf("[%d, %d]", pad[2*i], pad[2*i+1])
		}
		n.name = "stablehlo.convolution"
		n.props = joinEntries(n.props, fmt.Sprintf("padding = dense<[%s]> : tensor<%dx2xi64>", strings.Join(rows, ", "), spatial))
		if spatial == 0 {
			n.props = strings.TrimSuffix(n.props, ", padding = dense<[]> : tensor<0x2xi64>")
		}
		n.operands, n.ins = n.operands[:2], n.ins[:2]
		return c, convRule(n, pad)
	case "dynamic_gather":
		sizes, err := knownShape(n, ins, 2)
		if err != nil {
			return nil, err
		}
		n.name = "stablehlo.gather"
		n.props = strings.TrimSuffix(n.props, ", ") + ", slice_sizes = " + arrayI64(sizes)
		n.operands, n.ins = n.operands[:2], n.ins[:2]
		return c, gatherRule(n, sizes)
	}
	var err2 error
	switch {
	case elementwise[base]:
		err2 = elementwiseRule(n)
	case base == "broadcast_in_dim":
		dims, _ := propInts(n.props, "broadcast_dimensions")
		out := slices.Clone(n.outs[0].dims)
		for j, d := range dims {
			if d < len(out) && out[d] < 0 && j < len(n.ins[0].dims) {
				out[d] = n.ins[0].dims[j]
			}
		}
		n.outs[0] = n.outs[0].withDims(out)
	case base == "transpose":
		perm, _ := propInts(n.props, "permutation")
		if len(perm) != len(n.ins[0].dims) || len(perm) != len(n.outs[0].dims) {
			return nil, fmt.Errorf("%w: transpose's permutation %v", ErrSyntax, perm)
		}
		out := make([]int, len(perm))
		for i, p := range perm {
			if p < 0 || p >= len(perm) {
				return nil, fmt.Errorf("%w: transpose's permutation %v", ErrSyntax, perm)
			}
			out[i] = n.ins[0].dims[p]
		}
		n.outs[0] = n.outs[0].withDims(out)
	case base == "reduce":
		dims, _ := propInts(n.props, "dimensions")
		if 2*len(n.outs) != len(n.ins) {
			return nil, fmt.Errorf("%w: reduce of %d operands with %d results", ErrSyntax, len(n.ins), len(n.outs))
		}
		for i := range n.outs {
			var out []int
			for d, x := range n.ins[i].dims {
				if !slices.Contains(dims, d) {
					out = append(out, x)
				}
			}
			n.outs[i] = n.outs[i].withDims(out)
		}
	case base == "concatenate":
		dim, ok := propInts(n.props, "dimension")
		if !ok || len(dim) != 1 || dim[0] < 0 || dim[0] >= len(n.ins[0].dims) {
			return nil, fmt.Errorf("%w: concatenate's dimension", ErrSyntax)
		}
		out := slices.Clone(n.ins[0].dims)
		out[dim[0]] = 0
		for _, t := range n.ins {
			if len(t.dims) != len(out) {
				return nil, fmt.Errorf("%w: concatenate of ranks %d and %d", ErrSyntax, len(out), len(t.dims))
			}
			out[dim[0]] += t.dims[dim[0]]
		}
		n.outs[0] = n.outs[0].withDims(out)
	case base == "dot_general":
		err2 = dotRule(n)
	case base == "slice":
		start, _ := propInts(n.props, "start_indices")
		limit, _ := propInts(n.props, "limit_indices")
		strides, _ := propInts(n.props, "strides")
		err2 = sliceRule(n, start, limit, strides)
	case base == "pad":
		lo, _ := propInts(n.props, "edge_padding_low")
		hi, _ := propInts(n.props, "edge_padding_high")
		in, _ := propInts(n.props, "interior_padding")
		err2 = padRule(n, lo, hi, in)
	case base == "gather":
		sizes, _ := propInts(n.props, "slice_sizes")
		err2 = gatherRule(n, sizes)
	case base == "reduce_window":
		err2 = reduceWindowRule(n)
	case base == "convolution":
		pad, ok := propInts(n.props, "padding")
		if !ok {
			pad = nil
		}
		err2 = convRule(n, pad)
	case base == "dynamic_update_slice", base == "select_and_scatter", base == "scatter", base == "sort":
		// Results of the types of the first operands (the updated, scattered or sorted ones).
		for k := range n.outs {
			if k >= len(n.ins) || len(n.ins[k].dims) != len(n.outs[k].dims) {
				return nil, fmt.Errorf("%w: %s result %d", ErrSyntax, n.name, k)
			}
			n.outs[k] = n.outs[k].withDims(slices.Clone(n.ins[k].dims))
		}
	case base == "get_dimension_size", base == "iota", base == "constant", base == "dynamic_slice":
	case base == "custom_call" && strings.HasPrefix(customTarget(n), "mhlo.") && len(n.ins) == 1 && len(n.outs) == 1 &&
		len(n.ins[0].dims) == len(n.outs[0].dims) && customTarget(n) != "mhlo.topk":
		// CHLO's unary elementwise ops (mhlo.erf, mhlo.erf_inv, mhlo.lgamma, ...).
		n.outs[0] = n.outs[0].withDims(slices.Clone(n.ins[0].dims))
	default:
		return nil, fmt.Errorf("%w: refining %s with dynamic shapes", ErrUnsupported, n.name)
	}
	return c, err2
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// outsStatic reports whether every result type is static already.
func (n *op) outsStatic() bool {
	for _, t := range n.outs {
		if t.tensor() && !t.static() {
			return false
		}
	}
	return true
}

// knownShape returns the contents of operand i, which must be known: a shape operand.
func knownShape(n *op, ins [][]int64, i int) ([]int, error) {
	if i >= len(ins) || ins[i] == nil {
		return nil, fmt.Errorf("%w: operand %d (a shape) is not computed from the argument shapes", ErrUnsupported, i)
	}
	out := make([]int, len(ins[i]))
	for j, v := range ins[i] {
		out[j] = int(v)
	}
	return out, nil
}

// elementwiseRule: the result dimensions are those of the operands of the result's rank, which
// must agree.
func elementwiseRule(n *op) error {
	for k := range n.outs {
		var dims []int
		for _, t := range n.ins {
			if !t.tensor() || len(t.dims) != len(n.outs[k].dims) || len(t.dims) == 0 {
				continue
			}
			if dims == nil {
				dims = slices.Clone(t.dims)
			} else if !slices.Equal(dims, t.dims) {
				return fmt.Errorf("%w: operands of shapes %v and %v", ErrArguments, dims, t.dims)
			}
		}
		if n.outs[k].static() {
			continue
		}
		if dims == nil {
			return fmt.Errorf("%w: no operand gives result %d its dimensions", ErrUnsupported, k)
		}
		n.outs[k] = n.outs[k].withDims(dims)
	}
	return nil
}

// dotRule: batch dimensions, then the lhs's free ones, then the rhs's.
func dotRule(n *op) error {
	lb, _ := propInts(n.props, "lhs_batching_dimensions")
	rb, _ := propInts(n.props, "rhs_batching_dimensions")
	lc, _ := propInts(n.props, "lhs_contracting_dimensions")
	rc, _ := propInts(n.props, "rhs_contracting_dimensions")
	l, r := n.ins[0].dims, n.ins[1].dims
	for _, ds := range [][]int{lb, lc} {
		for _, d := range ds {
			if d < 0 || d >= len(l) {
				return fmt.Errorf("%w: dot_general's dimension %d of a rank %d operand", ErrSyntax, d, len(l))
			}
		}
	}
	var out []int
	for _, d := range lb {
		out = append(out, l[d])
	}
	for d, x := range l {
		if !slices.Contains(lb, d) && !slices.Contains(lc, d) {
			out = append(out, x)
		}
	}
	for d, x := range r {
		if !slices.Contains(rb, d) && !slices.Contains(rc, d) {
			out = append(out, x)
		}
	}
	if len(out) != len(n.outs[0].dims) {
		return fmt.Errorf("%w: dot_general of %v and %v gives rank %d, the op says %d", ErrSyntax, l, r, len(out), len(n.outs[0].dims))
	}
	n.outs[0] = n.outs[0].withDims(out)
	return nil
}

func sliceRule(n *op, start, limit, strides []int) error {
	x := n.ins[0].dims
	if len(start) != len(x) || len(limit) != len(x) || len(strides) != len(x) {
		return fmt.Errorf("%w: slice of rank %d with %d, %d, %d indices", ErrSyntax, len(x), len(start), len(limit), len(strides))
	}
	out := make([]int, len(x))
	for i := range x {
		if strides[i] < 1 || start[i] < 0 || limit[i] > x[i] || start[i] > limit[i] {
			return fmt.Errorf("%w: slice [%d:%d:%d] of a dimension of %d", ErrArguments, start[i], limit[i], strides[i], x[i])
		}
		out[i] = (limit[i] - start[i] + strides[i] - 1) / strides[i]
	}
	n.outs[0] = n.outs[0].withDims(out)
	return nil
}

func padRule(n *op, lo, hi, in []int) error {
	x := n.ins[0].dims
	if len(lo) != len(x) || len(hi) != len(x) || len(in) != len(x) {
		return fmt.Errorf("%w: pad of rank %d", ErrSyntax, len(x))
	}
	out := make([]int, len(x))
	for i, d := range x {
		out[i] = lo[i] + hi[i] + d
		if d > 0 {
			out[i] += (d - 1) * in[i]
		}
		if out[i] < 0 {
			return fmt.Errorf("%w: padding a dimension of %d by %d, %d leaves %d", ErrArguments, d, lo[i], hi[i], out[i])
		}
	}
	n.outs[0] = n.outs[0].withDims(out)
	return nil
}

// gatherRule is StableHLO's gather shape: the batch dimensions of the indices (all but
// index_vector_dim) where offset_dims are not, the kept slice sizes at offset_dims.
func gatherRule(n *op, sizes []int) error {
	offset, _ := propInts(n.props, "offset_dims")
	collapsed, _ := propInts(n.props, "collapsed_slice_dims")
	batching, _ := propInts(n.props, "operand_batching_dims")
	ivd, ok := propInts(n.props, "index_vector_dim")
	idx := n.ins[1].dims
	vec := 0 // StableHLO's printers leave out index_vector_dim = 0
	if ok {
		vec = ivd[0]
	}
	var batch []int
	for d, x := range idx {
		if d != vec {
			batch = append(batch, x)
		}
	}
	var kept []int
	for d, s := range sizes {
		if !slices.Contains(collapsed, d) && !slices.Contains(batching, d) {
			kept = append(kept, s)
		}
	}
	rank := len(batch) + len(offset)
	if len(kept) != len(offset) || rank != len(n.outs[0].dims) {
		return fmt.Errorf("%w: gather of rank %d, the op says %d", ErrSyntax, rank, len(n.outs[0].dims))
	}
	out := make([]int, rank)
	b, k := 0, 0
	for d := range out {
		if slices.Contains(offset, d) {
			out[d] = kept[k]
			k++
		} else {
			out[d] = batch[b]
			b++
		}
	}
	n.outs[0] = n.outs[0].withDims(out)
	return nil
}

// reduceWindowRule is lax.reduce_window's shape: each dimension padded, dilated and windowed.
func reduceWindowRule(n *op) error {
	win, _ := propInts(n.props, "window_dimensions")
	rank := len(n.ins[0].dims)
	ones := func(key string) []int { return propIntsOrOnes(n.props, key, rank) }
	strides, base, wdil := ones("window_strides"), ones("base_dilations"), ones("window_dilations")
	pad, ok := propInts(n.props, "padding")
	if !ok {
		pad = make([]int, 2*rank)
	}
	if len(win) != rank || len(strides) != rank || len(base) != rank || len(wdil) != rank || len(pad) != 2*rank {
		return fmt.Errorf("%w: reduce_window of rank %d", ErrSyntax, rank)
	}
	out := make([]int, rank)
	for i, d := range n.ins[0].dims {
		if strides[i] < 1 || base[i] < 1 || wdil[i] < 1 || win[i] < 1 {
			return fmt.Errorf("%w: reduce_window with window %v, strides %v, dilations %v and %v", ErrSyntax, win, strides, base, wdil)
		}
		out[i] = windowed(d, base[i], pad[2*i], pad[2*i+1], win[i], wdil[i], strides[i])
	}
	for k := range n.outs {
		n.outs[k] = n.outs[k].withDims(out)
	}
	return nil
}

// fold computes the contents of an integer result from known operands: the scalar and
// short-vector arithmetic that computes shapes (get_dimension_size, constants, converts,
// reshapes, broadcasts, concatenations, slices and the arithmetic and comparisons on them).
func fold(n *op, base string, ins [][]int64) ([]int64, error) {
	if len(n.outs) != 1 {
		return nil, nil
	}
	out := n.outs[0]
	switch base {
	case "constant":
		c, _ := constInts(n.props, out)
		return c, nil
	case "get_dimension_size":
		d, ok := propInts(n.props, "dimension")
		if !ok || len(n.ins) != 1 || d[0] < 0 || d[0] >= len(n.ins[0].dims) {
			return nil, fmt.Errorf("%w: get_dimension_size", ErrSyntax)
		}
		if x := n.ins[0].dims[d[0]]; x >= 0 {
			return []int64{int64(x)}, nil
		}
		return nil, nil
	}
	if !out.tensor() || !out.static() || out.size() > maxConst || len(ins) == 0 {
		return nil, nil
	}
	for _, c := range ins {
		if c == nil {
			return nil, nil
		}
	}
	switch base {
	case "convert", "reshape":
		if len(ins[0]) == out.size() {
			return slices.Clone(ins[0]), nil
		}
	case "broadcast_in_dim":
		if len(ins[0]) == 1 {
			s := make([]int64, out.size())
			for i := range s {
				s[i] = ins[0][0]
			}
			return s, nil
		}
	case "concatenate":
		var s []int64
		for _, c := range ins {
			s = append(s, c...)
		}
		if len(s) == out.size() {
			return s, nil
		}
	case "slice":
		start, _ := propInts(n.props, "start_indices")
		limit, _ := propInts(n.props, "limit_indices")
		strides, _ := propInts(n.props, "strides")
		if len(n.ins[0].dims) == 1 && len(start) == 1 && len(strides) == 1 && len(limit) == 1 && strides[0] > 0 {
			var s []int64
			for i := start[0]; i < limit[0] && i < len(ins[0]); i += strides[0] {
				s = append(s, ins[0][i])
			}
			if len(s) == out.size() {
				return s, nil
			}
		}
	case "negate", "not", "abs", "sign":
		s := make([]int64, len(ins[0]))
		for i, x := range ins[0] {
			switch base {
			case "negate":
				s[i] = -x
			case "not":
				if out.dtype == "i1" {
					s[i] = 1 - x
				} else {
					s[i] = ^x
				}
			case "abs":
				s[i] = max(x, -x)
			case "sign":
				s[i] = int64(compareInts(x, 0))
			}
		}
		return s, nil
	case "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or", "xor", "compare", "select", "clamp":
		return foldNary(n, base, ins, out)
	}
	return nil, nil
}

func compareInts(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// foldNary folds the elementwise arithmetic, comparisons and select of known integers.
func foldNary(n *op, base string, ins [][]int64, out typ) ([]int64, error) {
	size := out.size()
	at := func(c []int64, i int) int64 {
		if len(c) == 1 {
			return c[0]
		}
		return c[i]
	}
	for _, c := range ins {
		if len(c) != 1 && len(c) != size {
			return nil, nil
		}
	}
	s := make([]int64, size)
	for i := range s {
		a := at(ins[0], i)
		var b int64
		if len(ins) > 1 {
			b = at(ins[1], i)
		}
		switch base {
		case "add":
			s[i] = a + b
		case "subtract":
			s[i] = a - b
		case "multiply":
			s[i] = a * b
		case "divide", "remainder":
			if b == 0 {
				return nil, nil // left to the runtime, as XLA defines it
			}
			if base == "divide" {
				s[i] = a / b
			} else {
				s[i] = a % b
			}
		case "maximum":
			s[i] = max(a, b)
		case "minimum":
			s[i] = min(a, b)
		case "and":
			s[i] = a & b
		case "or":
			s[i] = a | b
		case "xor":
			s[i] = a ^ b
		case "select":
			if a != 0 {
				s[i] = b
			} else {
				s[i] = at(ins[2], i)
			}
		case "clamp":
			s[i] = min(max(b, a), at(ins[2], i))
		case "compare":
			dir, _ := propValue(n.props, "comparison_direction")
			c := compareInts(a, b)
			var ok bool
			switch {
			case strings.HasSuffix(dir, "EQ>"):
				ok = c == 0
			case strings.HasSuffix(dir, "NE>"):
				ok = c != 0
			case strings.HasSuffix(dir, "LT>"):
				ok = c < 0
			case strings.HasSuffix(dir, "LE>"):
				ok = c <= 0
			case strings.HasSuffix(dir, "GT>"):
				ok = c > 0
			case strings.HasSuffix(dir, "GE>"):
				ok = c >= 0
			default:
				return nil, fmt.Errorf("%w: comparison_direction %s", ErrSyntax, dir)
			}
			if ok {
				s[i] = 1
			}
		}
	}
	return s, nil
}

// convRule: a convolution's result dimensions, from its operands', its dimension numbers
// (#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>), window and padding (pad, low and
// high per spatial dimension; nil for none), as StableHLO's shape function computes them.
func convRule(n *op, pad []int) error {
	v, _ := propValue(n.props, "dimension_numbers")
	in, kernel, out, ok := convLayouts(v)
	lhs, rhs := n.ins[0].dims, n.ins[1].dims
	if !ok || len(in) != len(lhs) || len(kernel) != len(rhs) || len(out) != len(n.outs[0].dims) {
		return fmt.Errorf("%w: convolution with dimension numbers %q", ErrUnsupported, v)
	}
	spatial := len(lhs) - 2
	ones := func(key string) []int { return propIntsOrOnes(n.props, key, spatial) }
	strides, ldil, rdil := ones("window_strides"), ones("lhs_dilation"), ones("rhs_dilation")
	if pad == nil {
		pad = make([]int, 2*spatial)
	}
	groups, _ := propInts(n.props, "batch_group_count")
	if len(groups) != 1 || groups[0] < 1 {
		groups = []int{1}
	}
	if len(strides) != spatial || len(ldil) != spatial || len(rdil) != spatial || len(pad) != 2*spatial {
		return fmt.Errorf("%w: convolution of %d spatial dimensions with strides %v, dilations %v and %v, padding %v",
			ErrSyntax, spatial, strides, ldil, rdil, pad)
	}
	dims := make([]int, len(out))
	for i, l := range out {
		switch l {
		case "b":
			dims[i] = lhs[slices.Index(in, "b")] / groups[0]
		case "f":
			dims[i] = rhs[slices.Index(kernel, "o")]
		default:
			k, _ := strconv.Atoi(l)
			d, w := lhs[slices.Index(in, l)], rhs[slices.Index(kernel, l)]
			if strides[k] < 1 || ldil[k] < 1 || rdil[k] < 1 {
				return fmt.Errorf("%w: convolution with strides %v and dilations %v and %v", ErrSyntax, strides, ldil, rdil)
			}
			if w > 0 {
				dims[i] = windowed(d, ldil[k], pad[2*k], pad[2*k+1], w, rdil[k], strides[k])
			}
		}
	}
	n.outs[0] = n.outs[0].withDims(dims)
	return nil
}

// convLayouts reads the three layouts of a convolution's dimension numbers: each dimension's
// letter (b, f, i, o) or spatial index ("0", "1", ...). ok is false for any other form, or for
// layouts that do not name each dimension once.
func convLayouts(v string) (in, kernel, out []string, ok bool) {
	if !strings.HasPrefix(v, "#stablehlo.conv<") || !strings.HasSuffix(v, ">") {
		return nil, nil, nil, false
	}
	body := v[len("#stablehlo.conv<") : len(v)-1]
	if raw, ok := strings.CutPrefix(body, "raw "); ok {
		return rawConvLayouts(raw)
	}
	lr, o, found := strings.Cut(body, "->")
	if !found {
		return nil, nil, nil, false
	}
	l, r, found := strings.Cut(lr, "x")
	if !found {
		return nil, nil, nil, false
	}
	layout := func(s string, letters string) ([]string, bool) {
		s = strings.TrimSpace(s)
		if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
			return nil, false
		}
		var dims []string
		for _, f := range strings.Split(s[1:len(s)-1], ",") {
			dims = append(dims, strings.TrimSpace(f))
		}
		spatial := len(dims) - 2
		seen := map[string]bool{}
		for _, d := range dims {
			k, err := strconv.Atoi(d)
			if seen[d] || !(strings.Contains(letters, d) && len(d) == 1 || err == nil && k >= 0 && k < spatial) {
				return nil, false
			}
			seen[d] = true
		}
		return dims, len(seen) == len(dims) && spatial >= 0
	}
	var ok1, ok2, ok3 bool
	in, ok1 = layout(l, "bf")
	kernel, ok2 = layout(r, "io")
	out, ok3 = layout(o, "bf")
	return in, kernel, out, ok1 && ok2 && ok3 && len(in) == len(kernel) && len(in) == len(out)
}

// rawConvLayouts reads the layouts of dimension numbers written in their raw form (as
// mlir/bytecode writes them): input_batch_dimension = 0, input_feature_dimension = 3,
// input_spatial_dimensions = [1, 2], kernel_..., output_....
func rawConvLayouts(raw string) (in, kernel, out []string, ok bool) {
	layout := func(prefix, first, second string) ([]string, bool) {
		a, ok1 := propInts(raw, prefix+"_"+first+"_dimension")
		b, ok2 := propInts(raw, prefix+"_"+second+"_dimension")
		sp, ok3 := propInts(raw, prefix+"_spatial_dimensions")
		if !ok1 || !ok2 || !ok3 || len(a) != 1 || len(b) != 1 {
			return nil, false
		}
		dims := make([]string, len(sp)+2)
		set := func(i int, name string) bool {
			if i < 0 || i >= len(dims) || dims[i] != "" {
				return false
			}
			dims[i] = name
			return true
		}
		ok := set(a[0], first[:1]) && set(b[0], second[:1])
		for k, i := range sp {
			ok = ok && set(i, strconv.Itoa(k))
		}
		return dims, ok
	}
	var ok1, ok2, ok3 bool
	in, ok1 = layout("input", "batch", "feature")
	kernel, ok2 = layout("kernel", "input_feature", "output_feature")
	out, ok3 = layout("output", "batch", "feature")
	return in, kernel, out, ok1 && ok2 && ok3 && len(in) == len(kernel) && len(in) == len(out)
}

// propIntsOrOnes reads entry key as a list of integers, or n ones when it is missing (a
// window's default strides and dilations).
func propIntsOrOnes(props, key string, n int) []int {
	if v, ok := propInts(props, key); ok {
		return v
	}
	v := make([]int, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// windowed is the number of windows along one dimension of size d (StableHLO's shape rule of
// reduce_window and convolution): d dilated by base, padded by lo and hi, and a window of
// size w dilated by wdil moved by stride; 0 when the window does not fit.
func windowed(d, base, lo, hi, w, wdil, stride int) int {
	dilated := 0
	if d > 0 {
		dilated = (d-1)*base + 1
	}
	padded := dilated + lo + hi
	window := (w-1)*wdil + 1
	if padded < window {
		return 0
	}
	return (padded-window)/stride + 1
}
