package mlir

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Which values are manual. XLA's SPMD partitioner assumes, without checking, that the operand
// of a Sharding custom call with a manual mhlo.sharding, and the operand of an
// SPMDShardToFullShape call, are already manual; on one that is not it aborts the process
// (measured on the pinned CPU plugin with 8 partitions: hlo_sharding.cc "!IsManual()" once the
// Sharding call's result is used, custom_call_handler.cc "IsManual() || IsManualSubgroup()" for
// SPMDShardToFullShape). The well-formed pattern is JAX's shard_map lowering in GSPMD mode:
//
//	%a = custom_call @Sharding(%x) {mhlo.sharding = "<full sharding>"}
//	%b = custom_call @SPMDFullToShardShape(%a) {mhlo.sharding = "{manual}"}
//	%r = call @shmap_body(%b)                 // or ops on %b
//	%c = custom_call @Sharding(%r) {mhlo.sharding = "{manual}"}
//	%d = custom_call @SPMDShardToFullShape(%c) {mhlo.sharding = "<full sharding>"}
//
// So Check follows values through each function: a value is manual when it is a result of
// SPMDFullToShardShape, or of any other op (a call included) one of whose operands, or of
// whose regions' values, is manual, except SPMDShardToFullShape, whose result is full again;
// an argument of a function other than @main is manual when every call of the function passes
// a manual value there (JAX's @shmap_body).
//
// The two conversions are held to that pattern too: XLA takes the sharding of their operand
// from the op that made it and aborts when the shape each device holds differs on the two sides
// (custom_call_handler.cc "ShapeUtil::Compatible"; an argument's sharding attribute is enough
// to make it differ). So SPMDFullToShardShape's operand must be a Sharding call's result,
// SPMDShardToFullShape's that of a manual Sharding call, and the tiles of the operand's
// sharding (rounded up, as XLA pads) must give each device the shape the result's sharding
// gives it.

// flowUse is one use of an SSA value.
type flowUse struct {
	name string // %name, without a result number
	off  int
}

// flowOp is one op that defines values (or a custom call that defines none), as far as
// manual-ness is concerned.
type flowOp struct {
	fn      string
	depth   int       // len(checker.stack) at its first result
	results []string  // %names it defines
	uses    []flowUse // the values it uses itself (not those its regions' ops use)
	parent  *flowOp   // the op in one of whose regions it is, or nil
	// inner is whether an op in its regions uses a manual value (a value the regions capture
	// or compute from the op's own operands): then its results are manual too.
	inner   bool
	named   bool   // its op name has been read
	name    string // its op name: stablehlo.add, call, "func.call"
	symbols []string
	custom  bool   // a custom call
	target  string // a custom call's target
	at      int    // the offset of the target, or of the op
	// sharding is the custom call's mhlo.sharding as written; manual whether it is manual.
	sharding string
	manual   bool
	// operand and result are the dimensions of a custom call's first operand and result
	// type; typed whether both were read.
	operand, result []int64
	typed           bool
}

// manualFlow collects the ops of a module while Check reads it.
type manualFlow struct {
	ops     []*flowOp
	open    []*flowOp // ops whose text is being read, outermost first
	args    map[string][]string
	defLeft int  // result names of the newest op still to read (%a, %b = ...)
	needed  bool // the module has a manual Sharding or an SPMDShardToFullShape call
	// usesUntil is the offset before which defNames has found every value a use.
	usesUntil int
}

// returnOps end the op being read without defining a value.
var returnOps = map[string]bool{"return": true, "func.return": true, "stablehlo.return": true,
	"mhlo.return": true, "sdy.return": true, `"func.return"`: true, `"stablehlo.return"`: true}

// flowAttrs are the attribute names, bare or quoted, flowToken reads of a custom call.
var flowAttrs = map[string]bool{"call_target_name": true, `"call_target_name"`: true, "mhlo.sharding": true, `"mhlo.sharding"`: true}

// flowToken records what token t (not yet processed by token) says of values and ops.
func (c *checker) flowToken(t Token) {
	f := &c.flow
	depth := len(c.stack)
	for len(f.open) > 0 && f.open[len(f.open)-1].depth > depth {
		f.open = f.open[:len(f.open)-1] // its region closed
	}
	var top *flowOp
	if len(f.open) > 0 {
		top = f.open[len(f.open)-1]
	}
	switch t.Kind {
	case PercentIdent:
		fn := c.currentFunc()
		if fn == "" {
			if c.pendingFunc != "" && c.lx.peek(0).Is(Punct, ":") {
				if f.args == nil {
					f.args = map[string][]string{}
				}
				f.args[c.pendingFunc] = append(f.args[c.pendingFunc], t.Text)
			}
			return
		}
		if f.defLeft > 0 && top != nil {
			f.defLeft--
			top.results = append(top.results, t.Text)
			return
		}
		if n := c.defNames(); n > 0 {
			c.popFlow(depth)
			op := &flowOp{fn: fn, depth: depth, results: []string{t.Text}, at: t.Off, parent: c.flowTop()}
			f.ops = append(f.ops, op)
			f.open = append(f.open, op)
			f.defLeft = n - 1
			return
		}
		if top != nil {
			top.uses = append(top.uses, flowUse{t.Text, t.Off})
		}
	case Ident, String:
		if top != nil && !top.named && depth == top.depth {
			top.named, top.name = true, t.Text
		}
		custom := t.Kind == Ident && (t.Text == "stablehlo.custom_call" || t.Text == "mhlo.custom_call") ||
			t.Kind == String && (t.Text == `"stablehlo.custom_call"` || t.Text == `"mhlo.custom_call"`) && c.lx.peek(0).Is(Punct, "(")
		switch {
		case returnOps[t.Text]:
			c.popFlow(depth)
		case custom && (top == nil || top.depth != depth || top.name != t.Text || top.custom):
			// A custom call without results: an op of its own.
			c.popFlow(depth)
			if fn := c.currentFunc(); fn != "" {
				op := &flowOp{fn: fn, depth: depth, named: true, name: t.Text, custom: true, at: t.Off, parent: c.flowTop()}
				c.flowTypes(op, t.Off)
				f.ops = append(f.ops, op)
				f.open = append(f.open, op)
			}
		case custom:
			top.custom, top.at = true, t.Off
			c.flowTypes(top, t.Off)
		case top != nil && top.custom && flowAttrs[t.Text] && c.lx.peek(0).Is(Punct, "=") && c.lx.peek(1).Kind == String:
			v, err := Unquote(c.lx.peek(1).Text)
			if err != nil {
				return
			}
			if strings.Trim(t.Text, `"`) == "call_target_name" {
				top.target, top.at = v, c.lx.peek(1).Off
			} else if top.sharding == "" {
				top.sharding = c.lx.peek(1).Text
				s, err := parseHloSharding(v, c.partitions)
				top.manual = err == nil && s.manual
			}
			c.noteNeeded(top)
		}
	case AtIdent:
		if top == nil {
			return
		}
		name, err := t.Symbol()
		if err != nil {
			return
		}
		if top.custom && top.target == "" && len(top.symbols) == 0 {
			top.target, top.at = name, t.Off
			c.noteNeeded(top)
		}
		top.symbols = append(top.symbols, name)
	}
}

// flowTypes reads the tensor types of the custom call whose op name starts at off into op.
func (c *checker) flowTypes(op *flowOp, off int) {
	cc, bad := readCustomCall(c.src, off)
	if bad != nil || cc.resultTypes < 0 {
		return
	}
	var ok1, ok2 bool
	op.operand, ok1 = tensorDims(c.src, cc.operandTypes)
	op.result, ok2 = tensorDims(c.src, cc.resultTypes)
	op.typed = ok1 && ok2
}

// tensorDims reads the dimensions of the ranked tensor type at src[off:] (after spaces):
// tensor<8x2xf32> is [8 2], tensor<f32> is []; false for anything else (a dynamic dimension,
// another type).
func tensorDims(src string, off int) ([]int64, bool) {
	i := SkipSpace(src, off)
	if !strings.HasPrefix(src[i:], "tensor<") {
		return nil, false
	}
	i += len("tensor<")
	dims := []int64{}
	for {
		j := scanWhile(src, i, isDigit)
		if j == i {
			return dims, i < len(src) && src[i] != '?' && src[i] != '*'
		}
		if j >= len(src) || src[j] != 'x' {
			return nil, false
		}
		d, err := strconv.ParseInt(src[i:j], 10, 64)
		if err != nil {
			return nil, false
		}
		dims = append(dims, d)
		i = j + 1
	}
}

// perDevice returns the shape each device holds of a value of dims with sharding s (written
// as text, for partitions), as XLA's partitioner computes it (tiles rounded up), or a reason
// it cannot.
func perDevice(dims []int64, text string, partitions int) ([]int64, string) {
	v, err := Unquote(text)
	if err != nil {
		return nil, "its mhlo.sharding cannot be read"
	}
	s, err := parseHloSharding(v, partitions)
	switch {
	case err != nil:
		return nil, "its mhlo.sharding cannot be read"
	case s.tuple != nil:
		return nil, "its mhlo.sharding is a tuple sharding"
	case s.tiles == nil && (strings.Contains(v, "unknown") || strings.Contains(v, "unreduced")):
		return nil, fmt.Sprintf("its mhlo.sharding %s does not fix what each device holds", text)
	case s.tiles == nil:
		return dims, ""
	case len(s.tiles) != len(dims):
		return nil, fmt.Sprintf("its mhlo.sharding %s tiles %d dimensions of a rank-%d value", text, len(s.tiles), len(dims))
	}
	out := make([]int64, len(dims))
	for i, d := range dims {
		t := int64(s.tiles[i])
		out[i] = d / t
		if d%t != 0 {
			out[i]++
		}
	}
	return out, ""
}

// noteNeeded records that op needs the analysis.
func (c *checker) noteNeeded(op *flowOp) {
	if op.target == "SPMDShardToFullShape" || op.target == "SPMDFullToShardShape" || op.target == "Sharding" && op.manual {
		c.flow.needed = true
	}
}

// flowTop returns the innermost op being read, or nil.
func (c *checker) flowTop() *flowOp {
	if n := len(c.flow.open); n > 0 {
		return c.flow.open[n-1]
	}
	return nil
}

// popFlow ends the ops being read at depth or deeper: a new op starts there.
func (c *checker) popFlow(depth int) {
	f := &c.flow
	for len(f.open) > 0 && f.open[len(f.open)-1].depth >= depth {
		f.open = f.open[:len(f.open)-1]
	}
	f.defLeft = 0
}

// defNames returns how many values the op whose first result is the current token defines (the
// lookahead reads `%a = `, `%a:2 = `, `%a, %b = `), or 0 when the token is a use.
func (c *checker) defNames() int {
	if c.lx.peek(0).Off < c.flow.usesUntil {
		return 0
	}
	n := 1
	for k := 0; ; {
		t := c.lx.peek(k)
		switch {
		case t.Is(Punct, "="):
			return n
		case t.Is(Punct, ":") && c.lx.peek(k+1).Kind == Int:
			k += 2
		case t.Is(Punct, ",") && c.lx.peek(k+1).Kind == PercentIdent:
			n++
			k += 2
		default:
			// The values of this list up to t are all uses: the same lookahead from any of
			// them ends at t.
			c.flow.usesUntil = t.Off
			return 0
		}
	}
}

// manualValues checks, after the module has been read, that every manual Sharding call and
// every SPMDShardToFullShape call takes a manual value.
func (c *checker) manualValues() error {
	f := &c.flow
	if !f.needed {
		return nil
	}
	type key struct{ fn, name string }
	manual := map[key]bool{}
	argManual := map[key]bool{}
	isManual := func(fn, name string) bool { return manual[key{fn, name}] || argManual[key{fn, name}] }
	callee := func(op *flowOp) string {
		n := strings.Trim(op.name, `"`)
		if (n == "call" || n == "func.call") && len(op.symbols) > 0 {
			if _, ok := f.args[op.symbols[0]]; ok {
				return op.symbols[0]
			}
		}
		return ""
	}
	sites := map[string][]*flowOp{}
	for _, op := range f.ops {
		if fn := callee(op); fn != "" {
			sites[fn] = append(sites[fn], op)
		}
	}
	// A least fixed point: each round only makes more values, region ops and arguments manual.
	for changed := true; changed; {
		changed = false
		for _, op := range f.ops {
			uses := op.inner
			for _, u := range op.uses {
				if uses = uses || isManual(op.fn, u.name); uses {
					break
				}
			}
			if uses && op.parent != nil && !op.parent.inner {
				op.parent.inner, changed = true, true
			}
			m := uses
			switch op.target {
			case "SPMDFullToShardShape":
				m = true
			case "SPMDShardToFullShape":
				m = false
			}
			if !m {
				continue
			}
			for _, r := range op.results {
				if !manual[key{op.fn, r}] {
					manual[key{op.fn, r}], changed = true, true
				}
			}
		}
		for fn, args := range f.args {
			if fn == "main" || len(sites[fn]) == 0 {
				continue
			}
			for i, a := range args {
				all := true
				for _, s := range sites[fn] {
					if i >= len(s.uses) || !isManual(s.fn, s.uses[i].name) {
						all = false
						break
					}
				}
				if all && !argManual[key{fn, a}] {
					argManual[key{fn, a}], changed = true, true
				}
			}
		}
	}
	defs := map[key]*flowOp{}
	for _, op := range f.ops {
		for _, r := range op.results {
			if _, ok := defs[key{op.fn, r}]; !ok {
				defs[key{op.fn, r}] = op
			}
		}
	}
	for _, op := range f.ops {
		if !op.custom || !(op.target == "SPMDShardToFullShape" || op.target == "SPMDFullToShardShape" || op.target == "Sharding" && op.manual) {
			continue
		}
		what := "custom_call " + Quote(op.target)
		if len(op.uses) == 0 {
			return c.fail(op.at, ErrUnsupportedOp, what, "cannot read its operand")
		}
		u := op.uses[0]
		if op.target == "Sharding" {
			if !isManual(op.fn, u.name) {
				return c.fail(u.off, ErrUnsupportedOp, what,
					"mhlo.sharding %s on %s, which is not manual (not computed from an SPMDFullToShardShape result); XLA's SPMD partitioner aborts on it",
					op.sharding, u.name)
			}
			continue
		}
		// The conversions: their operand must be a Sharding call's result (XLA takes its
		// sharding as the operand's), and the shape each device holds must be the same on
		// both sides (else XLA aborts: custom_call_handler.cc, "ShapeUtil::Compatible").
		def := defs[key{op.fn, u.name}]
		if def == nil || !def.custom || def.target != "Sharding" || op.target == "SPMDShardToFullShape" && !def.manual {
			want := "a Sharding call's result"
			if op.target == "SPMDShardToFullShape" {
				want = "the result of a Sharding call with a manual mhlo.sharding"
			}
			return c.fail(u.off, ErrUnsupportedOp, what, "operand %s is not %s (XLA's SPMD partitioner aborts on other operands)", u.name, want)
		}
		if !op.typed || !def.typed {
			return c.fail(op.at, ErrUnsupportedOp, what, "cannot read its operand and result as ranked tensors of static shape")
		}
		in, why := perDevice(def.result, def.sharding, c.partitions)
		if why != "" {
			return c.fail(u.off, ErrUnsupportedOp, what, "operand %s: %s", u.name, why)
		}
		out, why := perDevice(op.result, op.sharding, c.partitions)
		if why != "" {
			return c.fail(op.at, ErrUnsupportedOp, what, "%s", why)
		}
		if !slices.Equal(in, out) {
			return c.fail(op.at, ErrUnsupportedOp, what, "each device holds %v of operand %s but %v of the result; XLA's SPMD partitioner aborts on it",
				in, u.name, out)
		}
	}
	return nil
}
