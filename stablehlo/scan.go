package stablehlo

import "github.com/gomlx/gopjrt/dtypes"

// ScanParams describe the stablehlo.while a Scan builds (WhileParams.Scan). The loop's
// operands, and its results, are in order: the i32 counter (WhileParams.TripCount is
// Length), Carry loop-carried values, Xs scanned inputs (passed through unchanged) and Ys
// stacked outputs (zeros at first). Iteration k reads index k of axis 0 of each input and
// writes index k of each stacked output, or index Length-1-k when Reverse.
type ScanParams struct {
	Length        int
	Reverse       bool
	Carry, Xs, Ys int
}

// ScanOptions are the options of Scan, as jax.lax.scan's keyword arguments.
type ScanOptions struct {
	// Length is the number of iterations. With xs it may be 0 (taken from xs) or must
	// equal the size of their axis 0; without xs it is the scan's length.
	Length int
	// Reverse runs the iterations from the last index of axis 0 to the first; ys are still
	// stacked in index order (jax.lax.scan's reverse=True).
	Reverse bool
}

// Scan is jax.lax.scan: it runs body once per index k of axis 0 of the inputs xs (all of the
// same size there), passing the loop-carried values (init at first) and the slices x[k],
// and returns the final carried values and the values body returned as y, stacked along a
// new axis 0 (ys[k] is the y of index k). body runs in an open region g (see region.go) and
// returns the next carried values, of the same types as init (a weak constant takes the
// carried value's type), and its ys. The loop is one stablehlo.while with a known trip count
// (WhileParams, with Scan set: see ScanParams).
//
// body is always called, even after an error, so the results hold len(init) and len(y)
// values (zero Values after an error). Errors, recorded as *OpError of op "scan": a nil
// body (ErrFunction), a scalar input, inputs of different lengths or a Length that differs
// from theirs, a length above 2^31-1, a body returning the wrong number or types of
// carried values (ErrShape, ErrDType).
func (f *Function) Scan(body func(g *Function, carry, x []Value) (next, y []Value), init, xs []Value, opts ScanOptions) (carry, ys []Value) {
	const opName = "scan"
	nc, nx := len(init), len(xs)
	carry = make([]Value, nc)
	if body == nil {
		f.failf(opName, -1, nil, ErrFunction, "scan needs a body, got nil")
		return carry, nil
	}
	ops, _ := f.check(opName, append(append([]Value{}, init...), xs...)...)
	for i, v := range ops {
		ops[i] = f.materialize(v, v.shape)
	}
	n := f.scanLength(opName, ops, nc, opts.Length)

	// The body: arguments counter, carry, xs; the stacked outputs' arguments are added once
	// body has told their types.
	args := make([]Shape, 1+nc+nx)
	args[0] = NewShape(dtypes.Int32)
	for i := range nc + nx {
		if len(ops) == nc+nx {
			args[1+i] = ops[i].shape
		} else {
			args[1+i] = NewShape(dtypes.Int32) // after an error: placeholders for body
		}
	}
	b := f.newRegion(true, args)
	// The loop's initial values as far as they are known before the body: the counter, the
	// carry and the inputs (ArgInits); the stacked outputs' follow once the body has told them.
	var counter *value
	if len(ops) == nc+nx && !f.failed() {
		counter = f.constant(opName, NewShape(dtypes.Int32), []lit{{kind: 'i'}}).v
		b.inits = append([]*value{counter}, ops...)
	}
	ba := b.Args()
	i := ba[0]
	idx := i
	if opts.Reverse {
		idx = b.Sub(b.Constant(int32(n-1)), i)
	}
	zero := b.Constant(int32(0))
	x := make([]Value, nx)
	for k, a := range ba[1+nc:] {
		dims := a.Shape().Dims()
		if len(dims) == 0 {
			x[k] = Value{} // scanLength recorded the error
			continue
		}
		if n == 0 { // no iteration reads x: a placeholder of its type
			x[k] = b.constant(opName, NewShape(a.DType(), dims[1:]...), []lit{zeroLitOf(a.DType())})
			continue
		}
		starts := append([]Value{idx}, repeatValue(zero, len(dims)-1)...)
		x[k] = b.Reshape(b.DynamicSlice(a, starts, append([]int{1}, dims[1:]...)), dims[1:]...)
	}
	next, y := body(b, ba[1:1+nc], x)
	if f.failed() {
		return carry, make([]Value, len(y))
	}
	if len(next) != nc {
		f.failf(opName, -1, nil, ErrShape, "body returned %d carried values for %d", len(next), nc)
		return carry, make([]Value, len(y))
	}
	yv, ok := b.check(opName, y...)
	if !ok {
		return carry, make([]Value, len(y))
	}
	stacked := make([]Shape, len(yv))
	yields := append(append([]Value{b.Add(i, b.Constant(int32(1)))}, next...), ba[1+nc:]...)
	for k, v := range yv {
		v = b.materialize(v, v.shape)
		stacked[k] = NewShape(v.shape.DType(), append([]int{n}, v.shape.Dims()...)...)
		acc := b.newArg(stacked[k])
		b.args = append(b.args, acc)
		if b.stacks == nil {
			b.stacks = make(map[int]*value)
		}
		b.stacks[len(b.args)-1] = v
		if n == 0 { // never runs: nothing to write
			yields = append(yields, Value{acc})
			continue
		}
		dims := append([]int{1}, v.shape.Dims()...)
		starts := append([]Value{idx}, repeatValue(zero, v.shape.Rank())...)
		yields = append(yields, b.DynamicUpdateSlice(Value{acc}, b.Reshape(Value{v}, dims...), starts))
	}
	all := append(append(append([]Shape{NewShape(dtypes.Int32)}, args[1:1+nc]...), args[1+nc:]...), stacked...)
	if !b.end(opName, "body result", yields, all) {
		return carry, make([]Value, len(y))
	}

	// The initial values, the condition and the loop.
	operands := append([]*value{counter}, ops...)
	for _, s := range stacked {
		operands = append(operands, f.constant(opName, s, []lit{zeroLitOf(s.DType())}).v)
	}
	if f.failed() {
		return carry, make([]Value, len(y))
	}
	c := f.newRegion(true, all)
	c.inits = operands
	if !c.end(opName, "cond result", []Value{c.Less(c.Args()[0], c.Constant(int32(n)))}, []Shape{NewShape(dtypes.Bool)}) {
		return carry, make([]Value, len(y))
	}
	p := WhileParams{TripCount: n, Scan: &ScanParams{Length: n, Reverse: opts.Reverse, Carry: nc, Xs: nx, Ys: len(yv)}}
	res := f.emitMulti(&Op{name: "stablehlo.while", operands: operands, params: p, regions: []*Function{c, b}}, all)
	return res[1 : 1+nc], res[1+nc+nx:]
}

// scanLength returns the length of a scan over ops (nc carried values, then the inputs),
// checking the inputs and the requested length.
func (f *Function) scanLength(opName string, ops []*value, nc, length int) int {
	if f.failed() {
		return 0
	}
	n := -1
	for k, v := range ops[nc:] {
		if v.shape.Rank() == 0 {
			f.failf(opName, nc+k, v, ErrShape, "scanned input must have an axis 0, got %v", v.shape)
			return 0
		}
		if n >= 0 && v.shape.Dim(0) != n {
			f.failf(opName, nc+k, v, ErrShape, "scanned inputs differ in length: %d vs %d", v.shape.Dim(0), n)
			return 0
		}
		n = v.shape.Dim(0)
	}
	switch {
	case n < 0 && length < 0:
		f.failf(opName, -1, nil, ErrShape, "negative scan length %d", length)
		return 0
	case n < 0:
		n = length
	case length != 0 && length != n:
		f.failf(opName, -1, nil, ErrShape, "scan length %d differs from the inputs' length %d", length, n)
		return 0
	}
	if n > 1<<31-1 {
		f.failf(opName, -1, nil, ErrShape, "scan length %d exceeds 2^31-1", n)
		return 0
	}
	return n
}

// zeroLitOf is the zero of element type d (false for pred).
func zeroLitOf(d DType) lit {
	if d == dtypes.Bool {
		return lit{kind: 'b'}
	}
	return lit{kind: 'i'}
}

func repeatValue(v Value, n int) []Value {
	out := make([]Value, n)
	for i := range out {
		out[i] = v
	}
	return out
}
