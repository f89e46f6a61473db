package mlir

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Limits of Check. XLA's compiler recurses over regions and types: on the pinned CPU plugin
// regions nested 700 deep still compile and 1,000 deep kill the process (stack overflow), and
// tuple types nested 3,000 deep are an error but 10,000 deep kill it. The limits leave a wide
// margin while staying far above what real programs use (JAX's deepest modules nest regions a
// dozen deep).
const (
	// MaxRegionDepth is the deepest nesting of regions (module, function and op bodies) Check
	// accepts.
	MaxRegionDepth = 64
	// MaxTypeDepth is the deepest nesting of angle brackets (types such as tuple<...> and
	// attribute bodies such as #sdy.sharding<...>) Check accepts.
	MaxTypeDepth = 64
)

// bytecodeMagic starts MLIR bytecode ("ML\xEFR").
const bytecodeMagic = "ML\xefR"

// Option configures Check.
type Option func(*config)

type config struct{ partitions int }

// Partitions says the module is compiled for n devices (SPMD partitions): its
// mhlo.num_partitions, if present, must be n, and its mhlo.sharding tile assignments must
// have n devices.
func Partitions(n int) Option { return func(c *config) { c.partitions = n } }

// Check reads the text of a StableHLO module and returns the first thing in it that MLIR or
// XLA would read differently than written, or that XLA could not survive, as an *Error
// wrapping one of the sentinels:
//
//   - ErrSyntax, ErrNesting: text MLIR's lexer rejects, unbalanced brackets; brackets nested
//     deeper than MaxNesting, regions deeper than MaxRegionDepth, types or attributes deeper
//     than MaxTypeDepth.
//   - ErrName: a symbol (@name: module, function, sdy.mesh, custom call target) or a Shardy mesh
//     axis ("x"=4 in sdy.mesh and inline meshes) whose name CheckName rejects.
//   - ErrRecursion: a function that calls itself, directly or through other functions
//     (func.call, call, and any other reference from one function's body to another).
//   - ErrTensorSize: a tensor type whose element count, or byte size, does not fit int64.
//   - ErrPartitions: mhlo.num_partitions below 1, or not the n of Partitions(n);
//     mhlo.num_replicas other than 1 (xlamesh compiles one replica).
//   - ErrSharding: an mhlo.sharding string CheckSharding rejects, or a manual sharding on an
//     argument of @main (XLA's SPMD partitioner aborts on it).
//   - ErrUnsupportedOp: infeed, outfeed, send and recv (stablehlo or mhlo), and custom calls to
//     Python host callbacks (xla_python_cpu_callback, xla_ffi_python_cpu_callback, ...): the
//     CPU runtime compiles them and execution never returns. A custom call to a target XLA
//     interprets itself (mhlo.topk and the other CHLO ops, Sharding, SPMDFullToShardShape,
//     SPMDShardToFullShape, xla.sdy.*, annotate_device_placement, MoveToHost, MoveToDevice)
//     whose operand or result count, or whose attributes, are not of the kinds XLA reads
//     (mhlo.topk's mhlo.attributes k an integer, largest a bool, ...), or an mhlo., chlo.,
//     xla.sdy. or SPMD target Check does not know; XLA casts such attributes unchecked and
//     dies. Likewise a stablehlo.composite XLA recomposes into a CHLO op (chlo.top_k,
//     chlo.erf, ... at version 1) whose composite_attributes are not that op's. The error
//     names the target and the attribute. And a Sharding call with a manual mhlo.sharding on
//     a value that is not manual (computed from an SPMDFullToShardShape result, in the same
//     function or through the arguments of a function every call passes manual values),
//     an SPMDFullToShardShape whose operand is not a Sharding call's result, an
//     SPMDShardToFullShape whose operand is not a manual Sharding call's result, or either
//     conversion whose operand and result do not give each device the same shape: XLA's SPMD
//     partitioner aborts on each. The error names the call and the value.
//   - ErrBytecode: MLIR bytecode. Check reads text only; read bytecode as text with
//     mlir/bytecode.ToText and check that text (pjrt.Client.Compile does).
//
// Check reads tokens, not a full MLIR grammar: text it accepts may still fail to parse in
// MLIR, which then returns an ordinary compile error.
func Check(text string, opts ...Option) error {
	if strings.HasPrefix(text, bytecodeMagic) {
		return errorAt(text, 0, ErrBytecode, "", "Check reads MLIR text; read bytecode as text with mlir/bytecode.ToText and check that")
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	c := &checker{lx: lexer{s: NewScanner(text)}, src: text, partitions: cfg.partitions,
		calls: map[string][]call{}, funcs: map[string]int{}}
	if err := c.run(); err != nil {
		return err
	}
	if err := c.recursion(); err != nil {
		return err
	}
	return c.manualValues()
}

// lexer adds lookahead to a Scanner.
type lexer struct {
	s   *Scanner
	buf []Token
}

func (l *lexer) next() Token {
	if len(l.buf) > 0 {
		t := l.buf[0]
		l.buf = l.buf[1:]
		return t
	}
	return l.s.Next()
}

// peek returns the token k places ahead (0: the next one).
func (l *lexer) peek(k int) Token {
	for len(l.buf) <= k {
		l.buf = append(l.buf, l.s.Next())
	}
	return l.buf[k]
}

// frame is one open bracket.
type frame struct {
	off     int
	c       byte   // ( [ { <
	region  bool   // a '{' that opens a region
	fn      string // for a function's body region: the function's name
	mainArg bool   // the '(' of @main's argument list
	tensor  int    // for the '<' of a tensor type: 1 + the offset of its "tensor" keyword
}

type call struct {
	callee string
	off    int
}

type checker struct {
	lx         lexer
	src        string
	partitions int // from Partitions, else from mhlo.num_partitions; 0 unknown
	fixed      bool
	stack      []frame
	regions    int // region frames on the stack
	angles     int // '<' frames on the stack

	awaitName    bool           // a func.func seen, its @name not yet
	pendingFunc  string         // a function defined, its body not yet opened
	pendingDepth int            // the depth of that func.func op
	pendingMain  bool           // that function is @main, its argument list not yet opened
	funcs        map[string]int // defined functions and their offsets
	calls        map[string][]call
	order        []string // functions in text order
	flow         manualFlow
}

func (c *checker) fail(off int, kind error, what, format string, args ...any) error {
	return errorAt(c.src, off, kind, what, fmt.Sprintf(format, args...))
}

func (c *checker) run() error {
	if c.partitions > 0 {
		c.fixed = true
	}
	var prev Token
	for {
		t := c.lx.next()
		if t.Kind == EOF {
			return c.lx.s.Err()
		}
		if t.Kind != Punct {
			c.flowToken(t)
		}
		if err := c.token(prev, t); err != nil {
			return err
		}
		prev = t
	}
}

// token checks one token; prev is the token before it.
func (c *checker) token(prev, t Token) error {
	switch t.Kind {
	case Punct:
		return c.punct(t)
	case AtIdent:
		name, err := t.Symbol()
		if err != nil {
			return err
		}
		if err := CheckName("symbol", name); err != nil {
			return c.nameError(t, err)
		}
		if prev.Kind == Ident && (prev.Text == "stablehlo.custom_call" || prev.Text == "mhlo.custom_call") {
			return c.customCall(t, name)
		}
		if c.awaitName && c.pendingDepth == len(c.stack) {
			c.awaitName = false
			c.define(name, t.Off)
			return nil
		}
		if fn := c.currentFunc(); fn != "" {
			c.calls[fn] = append(c.calls[fn], call{callee: name, off: t.Off})
		}
	case Ident:
		return c.ident(t)
	case String:
		return c.str(t)
	}
	return nil
}

func (c *checker) nameError(t Token, err error) error {
	e := err.(*Error)
	return c.fail(t.Off, ErrName, e.What, "%s", e.Msg)
}

func (c *checker) punct(t Token) error {
	switch t.Text {
	case "(", "[", "<", "{", "{-#":
		f := frame{off: t.Off, c: t.Text[0]}
		switch t.Text {
		case "{":
			f.region = c.isRegion()
			if f.region {
				if c.regions++; c.regions > MaxRegionDepth {
					return c.fail(t.Off, ErrNesting, "", "regions nest deeper than %d", MaxRegionDepth)
				}
				if c.pendingFunc != "" {
					f.fn, c.pendingFunc = c.pendingFunc, ""
				}
			}
		case "<":
			if c.angles++; c.angles > MaxTypeDepth {
				return c.fail(t.Off, ErrNesting, "", "types and attributes nest deeper than %d", MaxTypeDepth)
			}
		case "(":
			if c.pendingMain && c.pendingDepth == len(c.stack) {
				f.mainArg, c.pendingMain = true, false
			}
		}
		c.stack = append(c.stack, f)
	case ")", "]", "}", ">", "#-}":
		f := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		if f.region {
			c.regions--
		}
		if f.c == '<' {
			c.angles--
			if f.tensor > 0 {
				if err := c.tensorType(f.tensor-1, f.off, t.Off); err != nil {
					return err
				}
			}
		}
		if len(c.stack) < c.pendingDepth {
			c.awaitName, c.pendingFunc, c.pendingMain = false, "", false // a declaration without a body
		}
	}
	return nil
}

// isRegion tells a region's '{' from an attribute dictionary's by what follows it: a region
// starts with a block label, an op result, or an op (a name not followed by '=', ',' or '}').
func (c *checker) isRegion() bool {
	t1 := c.lx.peek(0)
	switch t1.Kind {
	case CaretIdent, PercentIdent:
		return true
	case String:
		return c.lx.peek(1).Is(Punct, "(")
	case Ident:
		t2 := c.lx.peek(1)
		return !(t2.Is(Punct, "=") || t2.Is(Punct, ",") || t2.Is(Punct, "}"))
	}
	return false
}

// currentFunc returns the function whose body encloses the current token, or "".
func (c *checker) currentFunc() string {
	for i := len(c.stack) - 1; i >= 0; i-- {
		if c.stack[i].fn != "" {
			return c.stack[i].fn
		}
	}
	return ""
}

func (c *checker) define(name string, off int) {
	c.pendingFunc = name
	if _, ok := c.funcs[name]; !ok {
		c.funcs[name] = off
		c.order = append(c.order, name)
	}
	c.pendingMain = name == "main"
}

var unsupportedOps = map[string]bool{
	"stablehlo.infeed": true, "stablehlo.outfeed": true, "stablehlo.send": true, "stablehlo.recv": true,
	"mhlo.infeed": true, "mhlo.outfeed": true, "mhlo.send": true, "mhlo.recv": true,
}

func (c *checker) ident(t Token) error {
	switch {
	case unsupportedOps[t.Text]:
		return c.fail(t.Off, ErrUnsupportedOp, t.Text, "the runtime cannot serve it: execution would never return")
	case (t.Text == "stablehlo.custom_call" || t.Text == "mhlo.custom_call") && c.lx.peek(0).Kind == AtIdent:
		return c.checkCustomCall(t.Off)
	case t.Text == "stablehlo.composite" && c.lx.peek(0).Kind == String:
		return c.checkComposite(t.Off)
	case t.Text == "func.func":
		// The next symbol at this depth names the function (pretty form).
		c.awaitName, c.pendingFunc, c.pendingMain, c.pendingDepth = true, "", false, len(c.stack)
	case t.Text == "tensor" && c.lx.peek(0).Is(Punct, "<"):
		// Mark the '<' that follows; its type is read when it closes.
		lt := c.lx.next()
		if err := c.punct(lt); err != nil {
			return err
		}
		c.stack[len(c.stack)-1].tensor = 1 + t.Off
	case t.Text == "mhlo.sharding", t.Text == "call_target_name", t.Text == "sym_name",
		t.Text == "mhlo.num_partitions", t.Text == "mhlo.num_replicas":
		if !c.lx.peek(0).Is(Punct, "=") {
			return nil
		}
		v := c.lx.peek(1)
		switch t.Text {
		case "mhlo.num_partitions", "mhlo.num_replicas":
			return c.count(t, c.lx.peek(1), c.lx.peek(2))
		}
		if v.Kind != String {
			return nil
		}
		val, err := Unquote(v.Text)
		if err != nil {
			return err
		}
		switch t.Text {
		case "mhlo.sharding":
			return c.sharding(v, val)
		case "call_target_name":
			return c.customCall(v, val)
		case "sym_name":
			// The generic form of func.func: "func.func"() <{sym_name = "f", ...}> ({...}).
			if c.genericFunc() {
				if err := CheckName("symbol", val); err != nil {
					return c.nameError(v, err)
				}
				c.define(val, v.Off)
				c.pendingDepth = len(c.stack) - 2 // the depth of the op, outside <{
				c.pendingMain = false             // its arguments are in arg_attrs, not in ( )
			}
		}
	}
	return nil
}

// genericFunc reports whether the current properties dictionary belongs to a generic
// "func.func" op: the stack ends in '<' '{' opened right after `"func.func"()`.
func (c *checker) genericFunc() bool {
	n := len(c.stack)
	if n < 2 || c.stack[n-1].c != '{' || c.stack[n-2].c != '<' {
		return false
	}
	before := strings.TrimRight(c.src[:c.stack[n-2].off], " \t\r\n")
	return strings.HasSuffix(before, `"func.func"()`)
}

func (c *checker) str(t Token) error {
	// A Shardy axis definition: "name"=size inside an sdy mesh, <["x"=4]> or <"x"=4>.
	if n := len(c.stack); n > 0 && (c.stack[n-1].c == '[' || c.stack[n-1].c == '<') &&
		c.lx.peek(0).Is(Punct, "=") && c.lx.peek(1).Kind == Int {
		name, err := Unquote(t.Text)
		if err != nil {
			return err
		}
		if err := CheckName("axis", name); err != nil {
			return c.nameError(t, err)
		}
		return nil
	}
	if (t.Text == `"stablehlo.custom_call"` || t.Text == `"mhlo.custom_call"`) && c.lx.peek(0).Is(Punct, "(") {
		return c.checkCustomCall(t.Off)
	}
	if t.Text == `"stablehlo.composite"` && c.lx.peek(0).Is(Punct, "(") {
		return c.checkComposite(t.Off)
	}
	// A generic op: "stablehlo.infeed"(...).
	if len(t.Text) > 2 && unsupportedOps[t.Text[1:len(t.Text)-1]] && c.lx.peek(0).Is(Punct, "(") {
		return c.fail(t.Off, ErrUnsupportedOp, t.Text[1:len(t.Text)-1], "the runtime cannot serve it: execution would never return")
	}
	return nil
}

func (c *checker) customCall(t Token, target string) error {
	if strings.HasPrefix(target, "xla_") && strings.Contains(target, "python") && strings.HasSuffix(target, "_callback") {
		return c.fail(t.Off, ErrUnsupportedOp, "custom_call "+Quote(target),
			"host callbacks need a Python runtime this process does not have: execution would never return")
	}
	return nil
}

// count checks `mhlo.num_partitions = N` and `mhlo.num_replicas = N`; v and after are the two
// tokens after '='.
func (c *checker) count(key, v, after Token) error {
	neg := v.Is(Punct, "-")
	if neg {
		v = after
	}
	if v.Kind != Int {
		return c.fail(key.Off, ErrPartitions, key.Text, "want an integer, found %q", v.Text)
	}
	n, err := strconv.ParseInt(v.Text, 0, 64)
	if err != nil || n > math.MaxInt32 {
		return c.fail(v.Off, ErrPartitions, key.Text, "%s does not fit i32", v.Text)
	}
	if neg {
		n = -n
	}
	if key.Text == "mhlo.num_replicas" {
		if n != 1 {
			return c.fail(key.Off, ErrPartitions, key.Text, "the module asks for %d replicas; xlamesh compiles 1 replica with SPMD partitions", n)
		}
		return nil
	}
	switch {
	case n < 1:
		return c.fail(key.Off, ErrPartitions, key.Text, "%d partitions, want >= 1", n)
	case c.fixed && int(n) != c.partitions:
		return c.fail(key.Off, ErrPartitions, key.Text,
			"the module is annotated for %d partitions but is compiled for %s; pass a device assignment of %d devices", n, devices(c.partitions), n)
	}
	if !c.fixed {
		c.partitions = int(n)
	}
	return nil
}

// devices returns "1 device" or "n devices".
func devices(n int) string {
	if n == 1 {
		return "1 device"
	}
	return strconv.Itoa(n) + " devices"
}

func (c *checker) sharding(t Token, val string) error {
	s, err := parseHloSharding(val, c.partitions)
	if err != nil {
		return c.fail(t.Off, ErrSharding, t.Text, "%s", err.Error())
	}
	if s.manual && c.inMainArgs() {
		return c.fail(t.Off, ErrSharding, t.Text, "an argument of @main cannot have a manual sharding (XLA's SPMD partitioner aborts on it)")
	}
	return nil
}

func (c *checker) inMainArgs() bool {
	for i := len(c.stack) - 1; i >= 0; i-- {
		if c.stack[i].mainArg {
			return true
		}
	}
	return false
}

// elementBytes is the storage size of StableHLO element types; unknown types count as the
// largest (16 bytes), so that a size check errs on the side of rejecting.
var elementBytes = map[string]uint64{
	"i1": 1, "i2": 1, "i4": 1, "i8": 1, "ui2": 1, "ui4": 1, "ui8": 1, "si8": 1,
	"i16": 2, "ui16": 2, "si16": 2, "f16": 2, "bf16": 2,
	"i32": 4, "ui32": 4, "si32": 4, "f32": 4, "tf32": 4,
	"i64": 8, "ui64": 8, "si64": 8, "f64": 8, "index": 8, "complex<f32>": 8,
	"complex<f64>": 16,
	"f4E2M1FN":     1, "f6E2M3FN": 1, "f6E3M2FN": 1, "f8E3M4": 1, "f8E4M3": 1, "f8E4M3FN": 1, "f8E4M3FNUZ": 1,
	"f8E4M3B11FNUZ": 1, "f8E5M2": 1, "f8E5M2FNUZ": 1, "f8E8M0FNU": 1,
}

// tensorType checks the tensor type whose keyword is at kw, '<' at lt and '>' at gt: its
// element count and byte size must fit int64.
func (c *checker) tensorType(kw, lt, gt int) error {
	body := c.src[lt+1 : gt]
	typ := c.src[kw : gt+1] // for errors: the type as written
	i := 0
	count := uint64(1)
	for {
		i = SkipSpace(body, i)
		if i < len(body) && body[i] == '*' || i < len(body) && body[i] == '?' {
			i = SkipSpace(body, i+1)
		} else if i < len(body) && isDigit(body[i]) {
			j := scanWhile(body, i, isDigit)
			d, err := strconv.ParseUint(body[i:j], 10, 63)
			if err != nil {
				return c.fail(lt+1+i, ErrTensorSize, typ, "dimension %s does not fit int64", body[i:j])
			}
			hi, lo := bits.Mul64(count, d)
			if hi != 0 || lo > math.MaxInt64 {
				return c.fail(lt+1+i, ErrTensorSize, typ, "the element count overflows int64 at dimension %s", body[i:j])
			}
			count = lo
			i = SkipSpace(body, j)
		} else {
			break
		}
		if i >= len(body) || body[i] != 'x' {
			return nil // not a shape MLIR reads; MLIR reports it
		}
		i++
	}
	elem := strings.TrimSpace(body[i:])
	if k := strings.IndexByte(elem, ','); k >= 0 {
		elem = strings.TrimSpace(elem[:k]) // drop the encoding
	}
	size, ok := elementBytes[strings.ReplaceAll(elem, " ", "")]
	if !ok {
		size = 16
	}
	if hi, lo := bits.Mul64(count, size); hi != 0 || lo > math.MaxInt64 {
		return c.fail(kw, ErrTensorSize, typ, "%d elements of %d bytes overflow int64 bytes", count, size)
	}
	return nil
}

// recursion reports a cycle in the call graph, if any.
func (c *checker) recursion() error {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(c.funcs))
	var path []call
	var visit func(fn string) error
	visit = func(fn string) error {
		color[fn] = grey
		for _, cl := range c.calls[fn] {
			if _, ok := c.funcs[cl.callee]; !ok {
				continue // a mesh, a custom call target, an external symbol
			}
			switch color[cl.callee] {
			case grey:
				i := slices.IndexFunc(path, func(p call) bool { return p.callee == cl.callee })
				cycle := append(slices.Clone(path[i+1:]), cl)
				names := []string{Symbol(cl.callee)}
				for _, p := range cycle {
					names = append(names, Symbol(p.callee))
				}
				return c.fail(cycle[0].off, ErrRecursion, Symbol(cl.callee),
					"%s; XLA cannot compile recursion", strings.Join(names, " calls "))
			case white:
				path = append(path, cl)
				if err := visit(cl.callee); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		}
		color[fn] = black
		return nil
	}
	for _, fn := range c.order {
		if color[fn] == white {
			path = append(path[:0], call{callee: fn, off: c.funcs[fn]})
			if err := visit(fn); err != nil {
				return err
			}
		}
	}
	return nil
}
