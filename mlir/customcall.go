package mlir

import (
	"fmt"
	"strconv"
	"strings"
)

// What Check knows of the custom calls XLA interprets itself. XLA reads their attributes with
// unchecked casts and their operands with CHECKs, so a wrong kind of value kills the process
// instead of failing the compile (measured on the pinned CPU plugin):
//
//   - mhlo.topk with k a string or a float: a segfault in the CHLO recomposition
//     (stablehlo_ext's chlo_recompose_ops casts mhlo.attributes' k to an integer, largest to a
//     bool);
//   - Sharding, SPMDFullToShardShape, SPMDShardToFullShape and the xla.sdy sharding calls with
//     other than one operand: an abort ("Sharding instruction must have exactly one operand",
//     sharding_remover.cc).
//
// A target of one of these families that is not in the table is refused: its shape is
// unknown. Any other target is left to XLA's custom-call registry, which refuses a name it
// does not know with an ordinary compile error.

// attrKind is the kind of value an attribute must have.
type attrKind uint8

const (
	kindInt         attrKind = iota + 1 // an integer literal, optionally typed: 4, -1, 4 : i64
	kindNonNeg                          // an integer literal >= 0
	kindBool                            // true or false
	kindString                          // a string literal
	kindDict                            // a dictionary {...}
	kindStrDict                         // a dictionary whose values are all string literals
	kindEmpty                           // the empty dictionary {}
	kindConfig                          // backend_config: a string or a dictionary
	kindEmptyConfig                     // backend_config "" or {}
	kindEmptyList                       // []
)

var attrKindNames = [...]string{kindInt: "an integer", kindNonNeg: "a non-negative integer", kindBool: "true or false",
	kindString: "a string", kindDict: "a dictionary", kindStrDict: "a dictionary of strings", kindEmpty: "the empty dictionary {}",
	kindConfig: "a string or a dictionary", kindEmptyConfig: `"" or {}`, kindEmptyList: "[]"}

// ccRule is what XLA needs of one custom-call target.
type ccRule struct {
	operands, results int // -1: any number
	// attrs are the op's own attributes with a required kind (present or not); required
	// lists those that must be there.
	attrs    map[string]attrKind
	required []string
	// inner is the dictionary attribute (mhlo.attributes) whose entries are the recomposed
	// op's attributes: exactly the names in innerAttrs may appear there, with those kinds;
	// innerRequired must.
	inner         string
	innerAttrs    map[string]attrKind
	innerRequired []string
	// only, when set, lists every attribute the op may have: XLA's CHLO recomposition leaves
	// a custom call with any other (api_version, has_side_effect, a misspelt name) as it is,
	// and an mhlo.erf custom call that reaches the SPMD partitioner unrecomposed segfaults the
	// pinned CPU plugin (measured on 8 partitions).
	only   map[string]bool
	refuse string // non-empty: the target is refused, for this reason
}

// Attribute kinds common to every rule: the op's own attributes that XLA reads.
var commonAttrs = map[string]attrKind{
	"backend_config": kindConfig, "api_version": kindInt, "has_side_effect": kindBool,
	"mhlo.version": kindInt, "mhlo.frontend_attributes": kindStrDict, "mhlo.sharding": kindString,
	"mhlo.attributes": kindDict,
}

// recomposable are the attributes XLA's CHLO recomposition accepts on a custom call
// (stablehlo_ext's chlo_recompose_ops: backend_config empty, no called computations).
var recomposable = map[string]bool{"call_target_name": true, "backend_config": true, "called_computations": true,
	"mhlo.attributes": true, "mhlo.version": true}

var (
	chloUnary = ccRule{operands: 1, results: 1, required: []string{"mhlo.attributes"}, inner: "mhlo.attributes",
		innerAttrs: map[string]attrKind{}, only: recomposable,
		attrs: map[string]attrKind{"backend_config": kindEmptyConfig, "called_computations": kindEmptyList}}
	topK = ccRule{operands: 1, results: 2, required: []string{"mhlo.attributes"}, inner: "mhlo.attributes",
		innerAttrs: map[string]attrKind{"k": kindNonNeg, "largest": kindBool, "is_stable": kindBool}, innerRequired: []string{"k"}, only: recomposable,
		attrs: map[string]attrKind{"backend_config": kindEmptyConfig, "called_computations": kindEmptyList}}
	shardingLike = ccRule{operands: 1, results: 1}
	// SPMDFullToShardShape makes a manual value: a sharding that is not manual aborts XLA
	// (custom_call_handler.cc: "hlo->sharding().IsManual()").
	fullToShard = ccRule{operands: 1, results: 1, required: []string{"mhlo.sharding"}}
	// xla.sdy.FuncResultSharding: XLA parses its xla.sdy.sharding frontend attribute unchecked
	// (a missing one, or one that is not a #sdy.sharding_per_value of one sharding, segfaults).
	funcResult = ccRule{operands: 1, results: 1, required: []string{"mhlo.frontend_attributes"}}
	placement  = ccRule{operands: 1, results: 1, required: []string{"mhlo.frontend_attributes"}}
)

// customCallRules maps the targets XLA interprets itself to what it needs of them.
var customCallRules = map[string]ccRule{
	"mhlo.topk": topK, "chlo.top_k": topK,
	"mhlo.tan": chloUnary, "mhlo.erf": chloUnary, "chlo.erf": chloUnary,
	"mhlo.acos": chloUnary, "chlo.acos": chloUnary, "mhlo.acosh": chloUnary, "chlo.acosh": chloUnary,
	"mhlo.asin": chloUnary, "chlo.asin": chloUnary, "mhlo.asinh": chloUnary, "chlo.asinh": chloUnary,
	"mhlo.atanh": chloUnary, "chlo.atanh": chloUnary, "mhlo.cosh": chloUnary, "chlo.cosh": chloUnary,
	"mhlo.sinh": chloUnary, "chlo.sinh": chloUnary,
	"chlo.ragged_dot": {refuse: "a ragged dot as a custom call (XLA's deprecated form; JAX writes a composite)"},

	"Sharding": shardingLike, "SPMDFullToShardShape": fullToShard, "SPMDShardToFullShape": shardingLike,
	"xla.sdy.FuncResultSharding":  funcResult,
	"xla.sdy.ShardingGroup":       {operands: 1, results: 0},
	"xla.sdy.GlobalToLocalShape":  {refuse: "Shardy's round-trip shard_map call (XLA aborts on one not in the exact round-trip form: shard_map_import.cc); write sdy.manual_computation"},
	"xla.sdy.LocalToGlobalShape":  {refuse: "Shardy's round-trip shard_map call (XLA aborts on one not in the exact round-trip form: shard_map_import.cc); write sdy.manual_computation"},
	"annotate_device_placement":   placement,
	"MoveToHost":                  shardingLike,
	"MoveToDevice":                shardingLike,
	"xla.sdy.PropagationBarrier":  shardingLike,
	"xla.sdy.ManualComputation":   {refuse: "Shardy's round-trip manual computation call (write sdy.manual_computation)"},
	"xla.sdy.FuncOperandSharding": shardingLike,
}

// ruleFor returns the rule of a target, and whether it has one. A target of a family XLA
// interprets itself (mhlo., chlo., xla.sdy., SPMD) without a rule gets a refusing rule.
func ruleFor(target string) (ccRule, bool) {
	if r, ok := customCallRules[target]; ok {
		return r, true
	}
	for _, p := range []string{"mhlo.", "chlo.", "xla.sdy.", "SPMD"} {
		if strings.HasPrefix(target, p) {
			return ccRule{refuse: "a target of XLA's own " + strings.TrimSuffix(p, ".") + " family that Check does not know"}, true
		}
	}
	return ccRule{}, false
}

// ccOp is one custom call as read from the text.
type ccOp struct {
	target    string
	targetOff int
	operands  int
	results   int
	attrs     []ccAttr // the op's properties and attributes
	// operandTypes and resultTypes are the offsets of the first operand type and the first
	// result type in the functional type (-1: none).
	operandTypes, resultTypes int
}

// ccAttr is one entry of an attribute dictionary: its name and the tokens of its value (none
// for a unit attribute).
type ccAttr struct {
	name string
	off  int
	val  []Token
}

// errUnreadable stops readCustomCall on text it cannot follow.
type errUnreadable struct {
	off int
	msg string
}

// readCustomCall reads the custom call whose op name (stablehlo.custom_call, pretty, or
// "stablehlo.custom_call", generic) starts at off: its target, operand count, attributes and
// result count, from its own tokens (a scanner of its own, so the checker's stream is not
// disturbed).
func readCustomCall(src string, off int) (op ccOp, bad *errUnreadable) {
	s := NewScanner(src[off:])
	next := func() Token {
		t := s.Next()
		t.Off += off
		return t
	}
	fail := func(t Token, format string, args ...any) (ccOp, *errUnreadable) {
		return op, &errUnreadable{t.Off, fmt.Sprintf(format, args...)}
	}
	name := next()
	t := next()
	op.targetOff = -1
	composite := strings.HasSuffix(strings.Trim(name.Text, `"`), ".composite")
	switch {
	case name.Kind == Ident && composite:
		// stablehlo.composite "name" %a, %b {attributes} : type
		if t.Kind != String {
			return fail(t, "expected the composite's name, found %q", t.Text)
		}
		v, err := Unquote(t.Text)
		if err != nil {
			return fail(t, "unreadable composite name %s", t.Text)
		}
		op.target, op.targetOff = v, t.Off
		for t = next(); t.Kind == PercentIdent || t.Kind == HashIdent || t.Is(Punct, ","); t = next() {
			if t.Kind == PercentIdent {
				op.operands++
			}
		}
	case name.Kind == Ident:
		if t.Kind != AtIdent {
			return fail(t, "expected the target (@name), found %q", t.Text)
		}
		target, err := t.Symbol()
		if err != nil {
			return fail(t, "unreadable target %s", t.Text)
		}
		op.target, op.targetOff = target, t.Off
		t = next()
	}
	if name.Kind != Ident || !composite {
		if !t.Is(Punct, "(") {
			return fail(t, "expected '(' before the operands, found %q", t.Text)
		}
		n, end := list(next, s, ")")
		if end.Kind == EOF {
			return fail(end, "operands never closed")
		}
		op.operands = n
		t = next()
	}
	for first := true; ; first = false {
		if !first {
			t = next()
		}
		switch {
		case t.Is(Punct, ":"):
		case t.Is(Punct, "<"):
			if t = next(); !t.Is(Punct, "{") {
				return fail(t, "expected '{' after '<', found %q", t.Text)
			}
			if t = readDict(next, s, &op.attrs); t.Kind == EOF {
				return fail(t, "properties never closed")
			}
			if t = next(); !t.Is(Punct, ">") {
				return fail(t, "expected '>' after the properties, found %q", t.Text)
			}
			continue
		case t.Is(Punct, "{"):
			if t = readDict(next, s, &op.attrs); t.Kind == EOF {
				return fail(t, "attributes never closed")
			}
			continue
		default:
			return fail(t, "expected ':' before the type, found %q", t.Text)
		}
		break
	}
	// The functional type: (operand types) -> result type or (result types).
	if t = next(); !t.Is(Punct, "(") {
		return fail(t, "expected '(' of the functional type, found %q", t.Text)
	}
	op.operandTypes, op.resultTypes = t.End(), -1
	if _, t = list(next, s, ")"); t.Kind == EOF {
		return fail(t, "operand types never closed")
	}
	if t = next(); !t.Is(Punct, "->") {
		return fail(t, "expected '->', found %q", t.Text)
	}
	if t = next(); t.Is(Punct, "(") {
		op.resultTypes = t.End()
		if op.results, t = list(next, s, ")"); t.Kind == EOF {
			return fail(t, "result types never closed")
		}
	} else if t.Kind == Ident || t.Kind == BangIdent {
		op.results, op.resultTypes = 1, t.Off
	} else {
		return fail(t, "expected a result type, found %q", t.Text)
	}
	if op.target == "" {
		for _, a := range op.attrs {
			if (a.name == "call_target_name" || composite && a.name == "name") && len(a.val) == 1 && a.val[0].Kind == String {
				v, err := Unquote(a.val[0].Text)
				if err != nil {
					return fail(a.val[0], "unreadable call_target_name")
				}
				op.target, op.targetOff = v, a.val[0].Off
			}
		}
	}
	return op, nil
}

// list reads the items of a bracketed list whose opening bracket was just read, up to its
// closing bracket close, and returns how many top-level items it has and the closing token
// (EOF when the text ends or the scanner fails first).
func list(next func() Token, s *Scanner, close string) (int, Token) {
	depth := s.Depth()
	n, empty := 0, true
	for {
		t := next()
		switch {
		case t.Kind == EOF:
			return 0, t
		case s.Depth() < depth:
			if !t.Is(Punct, close) {
				return 0, Token{Kind: EOF, Off: t.Off}
			}
			if !empty {
				n++
			}
			return n, t
		case s.Depth() == depth && t.Is(Punct, ","):
			n++
		default:
			empty = false
		}
	}
}

// readDict reads the entries of an attribute dictionary whose '{' was just read into attrs,
// and returns its closing '}' (EOF on text it cannot follow).
func readDict(next func() Token, s *Scanner, attrs *[]ccAttr) Token {
	depth := s.Depth()
	for {
		t := next()
		if t.Kind == EOF || s.Depth() < depth {
			return t
		}
		var name string
		switch t.Kind {
		case Ident:
			name = t.Text
		case String:
			v, err := Unquote(t.Text)
			if err != nil {
				return Token{Kind: EOF, Off: t.Off}
			}
			name = v
		default:
			return Token{Kind: EOF, Off: t.Off}
		}
		a := ccAttr{name: name, off: t.Off}
		t = next()
		if t.Is(Punct, "=") {
			for {
				t = next()
				if t.Kind == EOF || s.Depth() < depth || s.Depth() == depth && t.Is(Punct, ",") {
					break
				}
				a.val = append(a.val, t)
			}
		}
		*attrs = append(*attrs, a)
		switch {
		case t.Kind == EOF:
			return t
		case s.Depth() < depth:
			return t
		case !t.Is(Punct, ","):
			return Token{Kind: EOF, Off: t.Off}
		}
	}
}

// kindOf reports whether the value tokens v are a value of kind k.
func kindOf(v []Token, k attrKind) bool {
	switch k {
	case kindInt, kindNonNeg:
		if len(v) > 0 && v[0].Is(Punct, "-") {
			if k == kindNonNeg {
				return false
			}
			v = v[1:]
		}
		if len(v) == 0 || v[0].Kind != Int {
			return false
		}
		if _, err := strconv.ParseInt(v[0].Text, 0, 64); err != nil {
			return false
		}
		v = v[1:]
		if len(v) == 0 {
			return true
		}
		return len(v) == 2 && v[0].Is(Punct, ":") && v[1].Kind == Ident && isIntType(v[1].Text)
	case kindBool:
		return len(v) == 1 && v[0].Kind == Ident && (v[0].Text == "true" || v[0].Text == "false")
	case kindString:
		return len(v) == 1 && v[0].Kind == String
	case kindDict, kindEmpty, kindStrDict:
		if len(v) < 2 || !v[0].Is(Punct, "{") || !v[len(v)-1].Is(Punct, "}") {
			return false
		}
		switch k {
		case kindEmpty:
			return len(v) == 2
		case kindStrDict:
			// name = "string" entries only.
			body := v[1 : len(v)-1]
			for len(body) > 0 {
				if len(body) < 3 || (body[0].Kind != Ident && body[0].Kind != String) || !body[1].Is(Punct, "=") || body[2].Kind != String {
					return false
				}
				body = body[3:]
				if len(body) > 0 {
					if !body[0].Is(Punct, ",") {
						return false
					}
					body = body[1:]
				}
			}
		}
		return true
	case kindConfig:
		return kindOf(v, kindString) || kindOf(v, kindDict)
	case kindEmptyConfig:
		return len(v) == 1 && v[0].Is(String, `""`) || kindOf(v, kindEmpty)
	case kindEmptyList:
		return len(v) == 2 && v[0].Is(Punct, "[") && v[1].Is(Punct, "]")
	}
	return false
}

// isIntType reports whether s names a builtin integer type: i64, si32, ui8, index.
func isIntType(s string) bool {
	if s == "index" {
		return true
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "s"), "u")
	if len(s) < 2 || s[0] != 'i' {
		return false
	}
	_, err := strconv.ParseUint(s[1:], 10, 16)
	return err == nil
}

// checkCustomCall checks the custom call whose op name starts at off against the rule of its
// target.
func (c *checker) checkCustomCall(off int) error {
	op, bad := readCustomCall(c.src, off)
	if bad != nil {
		return c.fail(bad.off, ErrUnsupportedOp, "custom_call", "cannot read its operands, attributes and type: %s", bad.msg)
	}
	what := "custom_call " + Quote(op.target)
	at := op.targetOff
	if at < 0 {
		at = off
	}
	rule, ok := ruleFor(op.target)
	if !ok {
		return nil // XLA's custom-call registry: an unknown name is an ordinary compile error
	}
	if rule.refuse != "" {
		return c.fail(at, ErrUnsupportedOp, what, "%s", rule.refuse)
	}
	if rule.operands >= 0 && op.operands != rule.operands {
		return c.fail(at, ErrUnsupportedOp, what, "%d operands; XLA needs exactly %d", op.operands, rule.operands)
	}
	if rule.results >= 0 && op.results != rule.results {
		return c.fail(at, ErrUnsupportedOp, what, "%d results; XLA needs exactly %d", op.results, rule.results)
	}
	seen := map[string]bool{}
	for _, a := range op.attrs {
		seen[a.name] = true
		if rule.only != nil && !rule.only[a.name] {
			return c.fail(a.off, ErrUnsupportedOp, what, "attribute %s: XLA would not rebuild the CHLO op from a custom call with it", Quote(a.name))
		}
		k, ok := rule.attrs[a.name]
		if !ok {
			k, ok = commonAttrs[a.name]
		}
		if ok && !kindOf(a.val, k) {
			return c.fail(a.off, ErrUnsupportedOp, what, "attribute %s must be %s", a.name, attrKindNames[k])
		}
		if a.name == rule.inner {
			if err := c.innerAttrs(op, rule, a, what); err != nil {
				return err
			}
		}
	}
	for _, r := range rule.required {
		if !seen[r] {
			return c.fail(at, ErrUnsupportedOp, what, "attribute %s is missing", r)
		}
	}
	switch op.target {
	case "annotate_device_placement":
		return c.placement(op, at, what)
	case "SPMDFullToShardShape":
		for _, a := range op.attrs {
			if a.name == "mhlo.sharding" {
				if v, err := Unquote(a.val[0].Text); err != nil || !strings.Contains(v, "manual") {
					return c.fail(a.off, ErrUnsupportedOp, what, "mhlo.sharding %s is not manual; XLA needs a manual sharding here", a.val[0].Text)
				}
			}
		}
	case "xla.sdy.FuncResultSharding":
		return c.funcResultSharding(op, at, what)
	}
	return nil
}

// innerAttrs checks the entries of the dictionary attribute a (mhlo.attributes), whose
// entries become the attributes of the op XLA rebuilds.
func (c *checker) innerAttrs(op ccOp, rule ccRule, a ccAttr, what string) error {
	var entries []ccAttr
	i := 0
	next := func() Token {
		if i >= len(a.val) {
			return Token{Kind: EOF}
		}
		i++
		return a.val[i-1]
	}
	// The value tokens were read by a scanner that tracked depth; re-read them flat.
	if len(a.val) < 2 || !a.val[0].Is(Punct, "{") {
		return c.fail(a.off, ErrUnsupportedOp, what, "attribute %s must be a dictionary", a.name)
	}
	next()
	for {
		t := next()
		if t.Kind == EOF || t.Is(Punct, "}") && i == len(a.val) {
			break
		}
		if t.Kind != Ident && t.Kind != String {
			return c.fail(t.Off, ErrUnsupportedOp, what, "cannot read attribute %s", a.name)
		}
		name := t.Text
		if t.Kind == String {
			v, err := Unquote(t.Text)
			if err != nil {
				return c.fail(t.Off, ErrUnsupportedOp, what, "cannot read attribute %s", a.name)
			}
			name = v
		}
		e := ccAttr{name: name, off: t.Off}
		depth := 0
		if t = next(); t.Is(Punct, "=") {
			for {
				t = next()
				if t.Kind == EOF || depth == 0 && (t.Is(Punct, ",") || t.Is(Punct, "}") && i == len(a.val)) {
					break
				}
				switch t.Text {
				case "(", "[", "{", "<":
					depth++
				case ")", "]", "}", ">":
					depth--
				}
				e.val = append(e.val, t)
			}
		}
		entries = append(entries, e)
		if t.Kind == EOF || t.Is(Punct, "}") && i == len(a.val) {
			break
		}
	}
	seen := map[string]bool{}
	for _, e := range entries {
		k, ok := rule.innerAttrs[e.name]
		if !ok {
			return c.fail(e.off, ErrUnsupportedOp, what, "%s.%s: an attribute XLA does not expect here", a.name, e.name)
		}
		if !kindOf(e.val, k) {
			return c.fail(e.off, ErrUnsupportedOp, what, "%s.%s must be %s", a.name, e.name, attrKindNames[k])
		}
		seen[e.name] = true
	}
	for _, r := range rule.innerRequired {
		if !seen[r] {
			return c.fail(a.off, ErrUnsupportedOp, what, "%s.%s is missing", a.name, r)
		}
	}
	return nil
}

// placements are the memory kinds annotate_device_placement may name.
var placements = map[string]bool{"device": true, "pinned_host": true, "unpinned_host": true}

// placement checks annotate_device_placement's _xla_buffer_placement frontend attribute.
func (c *checker) placement(op ccOp, at int, what string) error {
	for _, a := range op.attrs {
		if a.name != "mhlo.frontend_attributes" {
			continue
		}
		v := a.val
		for i := 1; i+2 < len(v); i++ {
			if (v[i].Text == "_xla_buffer_placement" || v[i].Text == `"_xla_buffer_placement"`) && v[i+1].Is(Punct, "=") {
				s, err := Unquote(v[i+2].Text)
				if err != nil || !placements[s] {
					return c.fail(v[i+2].Off, ErrUnsupportedOp, what, "_xla_buffer_placement %s, want \"device\", \"pinned_host\" or \"unpinned_host\"", v[i+2].Text)
				}
				return nil
			}
		}
	}
	return c.fail(at, ErrUnsupportedOp, what, "mhlo.frontend_attributes._xla_buffer_placement is missing")
}

// compositeRules are the composites XLA recomposes into CHLO ops at version 1 (stablehlo_ext's
// chlo_recompose_ops): their composite_attributes become the op's attributes, unchecked, so
// chlo.top_k's k must be an integer (a string or a float segfaults the pinned CPU plugin) and
// the unary ops take none. Other composites are inlined from their decomposition.
var compositeRules = func() map[string]ccRule {
	unary := ccRule{operands: 1, results: 1, inner: "composite_attributes", innerAttrs: map[string]attrKind{}}
	m := map[string]ccRule{"chlo.top_k": {operands: 1, results: 2, required: []string{"composite_attributes"}, inner: "composite_attributes",
		innerAttrs: map[string]attrKind{"k": kindNonNeg, "largest": kindBool, "is_stable": kindBool}, innerRequired: []string{"k"}}}
	for _, n := range []string{"acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh", "erf"} {
		m["chlo."+n] = unary
	}
	return m
}()

// checkComposite checks the stablehlo.composite op whose name starts at off: a composite XLA
// recomposes into a CHLO op must have the operands, results and attributes that op takes.
func (c *checker) checkComposite(off int) error {
	op, bad := readCustomCall(c.src, off)
	if bad != nil {
		return c.fail(bad.off, ErrUnsupportedOp, "composite", "cannot read its operands, attributes and type: %s", bad.msg)
	}
	rule, ok := compositeRules[op.target]
	if !ok {
		return nil
	}
	version := int64(0) // StableHLO's default
	for _, a := range op.attrs {
		if a.name == "version" {
			if !kindOf(a.val, kindInt) {
				return c.fail(a.off, ErrUnsupportedOp, "composite "+Quote(op.target), "attribute version must be an integer")
			}
			version, _ = strconv.ParseInt(a.val[0].Text, 0, 64)
			if a.val[0].Is(Punct, "-") {
				version = -1
			}
		}
	}
	if version != 1 {
		return nil // not recomposed: XLA inlines the decomposition
	}
	what := "composite " + Quote(op.target)
	at := op.targetOff
	if at < 0 {
		at = off
	}
	if op.operands != rule.operands {
		return c.fail(at, ErrUnsupportedOp, what, "%d operands; XLA needs exactly %d", op.operands, rule.operands)
	}
	if op.results != rule.results {
		return c.fail(at, ErrUnsupportedOp, what, "%d results; XLA needs exactly %d", op.results, rule.results)
	}
	seen := map[string]bool{}
	for _, a := range op.attrs {
		seen[a.name] = true
		if a.name == rule.inner {
			if !kindOf(a.val, kindDict) {
				return c.fail(a.off, ErrUnsupportedOp, what, "attribute %s must be a dictionary", a.name)
			}
			if err := c.innerAttrs(op, rule, a, what); err != nil {
				return err
			}
		}
	}
	for _, r := range rule.required {
		if !seen[r] {
			return c.fail(at, ErrUnsupportedOp, what, "attribute %s is missing", r)
		}
	}
	return nil
}

// funcResultSharding checks xla.sdy.FuncResultSharding's xla.sdy.sharding frontend attribute:
// a string holding #sdy.sharding_per_value<[...]> of exactly one sharding.
func (c *checker) funcResultSharding(op ccOp, at int, what string) error {
	for _, a := range op.attrs {
		if a.name != "mhlo.frontend_attributes" {
			continue
		}
		v := a.val
		for i := 1; i+2 < len(v); i++ {
			if (v[i].Text == "xla.sdy.sharding" || v[i].Text == `"xla.sdy.sharding"`) && v[i+1].Is(Punct, "=") {
				s, err := Unquote(v[i+2].Text)
				if err != nil || !oneShardingPerValue(s) {
					return c.fail(v[i+2].Off, ErrUnsupportedOp, what, "xla.sdy.sharding %s is not a #sdy.sharding_per_value<[...]> of one sharding", v[i+2].Text)
				}
				return nil
			}
		}
	}
	return c.fail(at, ErrUnsupportedOp, what, "mhlo.frontend_attributes.xla.sdy.sharding is missing")
}

// oneShardingPerValue reports whether s scans as #sdy.sharding_per_value<[<...>]>: a list of
// exactly one sharding.
func oneShardingPerValue(s string) bool {
	sc := NewScanner(s)
	for _, want := range []string{"#sdy.sharding_per_value", "<", "[", "<"} {
		if sc.Next().Text != want {
			return false
		}
	}
	depth := sc.Depth() // inside the sharding's '<'
	for {
		t := sc.Next()
		if t.Kind == EOF {
			return false
		}
		if sc.Depth() < depth { // the sharding's '>'
			break
		}
	}
	for _, want := range []string{"]", ">"} {
		if !sc.Next().Is(Punct, want) {
			return false
		}
	}
	return sc.Next().Kind == EOF && sc.Err() == nil
}
