package bytecode

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shapes"
)

// textAttr is a converted attribute: its name and its value as StableHLO text.
type textAttr struct{ name, text string }

// convert returns the StableHLO (or func, or other dialect's) name of o and its
// properties as text, applying what StableHLO's VHLO legalization does: defaults VHLO
// spells out are dropped, dimension numbers are put back together, integer tensors
// become dense arrays, strings become symbol references.
func (p *printer) convert(o *op, inFunc bool) (string, []textAttr) {
	props := p.props(o)
	if p.err != nil {
		return "", nil
	}
	if p.f.dialects[o.name.dialect].name != "vhlo" {
		out := make([]textAttr, 0, len(props))
		for _, a := range props {
			out = append(out, textAttr{a.name, p.attrText(o, a.a)})
		}
		return p.opName(o), out
	}
	if _, known := vhloOpAttrs[o.name.name]; !known {
		p.fail(o, ErrUnsupported, "VHLO op %s", p.opName(o))
		return "", nil
	}
	base, version := splitVersion(o.name.name)
	name := "stablehlo." + base
	switch base {
	case "call":
		name = "func.call"
	case "return":
		if inFunc {
			name = "func.return"
		}
	case "func":
		p.fail(o, ErrUnsupported, "function nested in an op")
		return "", nil
	}
	c := &conv{p: p, o: o, attrs: map[string]attr{}}
	for _, a := range props {
		c.attrs[a.name] = a.a
		c.order = append(c.order, a.name)
	}
	c.removeDefaults(base, version)
	c.implode(base, version)
	for _, n := range c.order {
		a, ok := c.attrs[n]
		if !ok {
			continue
		}
		if n == "channel_id" && collectives[base] {
			c.out = append(c.out, textAttr{"channel_handle", c.special(base, n, a)})
			continue
		}
		c.out = append(c.out, textAttr{n, c.special(base, n, a)})
	}
	sort.Slice(c.out, func(i, j int) bool { return c.out[i].name < c.out[j].name })
	return name, c.out
}

// splitVersion splits "add_v1" into "add" and 1.
func splitVersion(mnemonic string) (string, int) {
	i := strings.LastIndex(mnemonic, "_v")
	if i < 0 {
		return mnemonic, 0
	}
	v, err := strconv.Atoi(mnemonic[i+2:])
	if err != nil {
		return mnemonic, 0
	}
	return mnemonic[:i], v
}

// conv holds the attributes of one VHLO op while they are converted.
type conv struct {
	p     *printer
	o     *op
	attrs map[string]attr
	order []string
	out   []textAttr
}

func (c *conv) drop(names ...string) {
	for _, n := range names {
		delete(c.attrs, n)
	}
}

func (c *conv) dropIf(name string, pred func(attr) bool) {
	if a, ok := c.attrs[name]; ok && pred(a) {
		delete(c.attrs, name)
	}
}

func isBool(v bool) func(attr) bool {
	return func(a attr) bool { b, ok := a.(aBool); return ok && bool(b) == v }
}

func isInt(v int64) func(attr) bool {
	return func(a attr) bool {
		i, ok := a.(aInt)
		return ok && signedValue(i) == v
	}
}

func isEmptyArray(a attr) bool  { l, ok := a.(aArray); return ok && len(l) == 0 }
func isEmptyDict(a attr) bool   { d, ok := a.(aDict); return ok && len(d) == 0 }
func isEmptyString(a attr) bool { s, ok := a.(aString); return ok && s.s == "" }
func isEmptyTensor(a attr) bool { t, ok := a.(aTensor); return ok && len(t.data) == 0 }

func isEnum(k enumKind, v uint64) func(attr) bool {
	return func(a attr) bool { e, ok := a.(aEnum); return ok && e.kind == k && e.v == v }
}

// isSplatInt reports whether a is an integer or boolean tensor whose elements all equal v.
func isSplatInt(v int64) func(attr) bool {
	return func(a attr) bool {
		t, ok := a.(aTensor)
		if !ok {
			return false
		}
		vals, ok := tensorInts(t)
		if !ok || len(vals) == 0 {
			return false
		}
		for _, x := range vals {
			if x != v {
				return false
			}
		}
		return true
	}
}

func allDefaultPrecision(a attr) bool {
	l, ok := a.(aArray)
	if !ok {
		return false
	}
	for _, e := range l {
		if !isEnum(enumPrecision, 0)(e) {
			return false
		}
	}
	return true
}

func isDefaultAccuracy(a attr) bool {
	r, ok := a.(aResultAccuracy)
	return ok && r.atol<<1 == 0 && r.rtol<<1 == 0 && r.ulps == 0 && isEnum(enumResultAccuracyMode, 0)(r.mode)
}

func (c *conv) removeDefaults(base string, version int) {
	switch base {
	case "all_gather", "all_reduce", "reduce_scatter":
		c.dropIf("channel_id", isInt(0))
		c.dropIf("use_global_device_ids", isBool(false))
	case "all_to_all", "collective_permute":
		c.dropIf("channel_id", isInt(0))
	case "collective_broadcast":
		c.dropIf("channel_id", isInt(0))
		c.dropIf("has_dynamic_root", isBool(false))
	case "collective_reduce":
		c.dropIf("channel_id", isInt(0))
		c.dropIf("use_global_device_ids", isBool(false))
		c.dropIf("has_dynamic_root", isBool(false))
	case "cholesky":
		c.dropIf("lower", isBool(false))
	case "compare":
		c.dropIf("compare_type", isEnum(enumComparisonType, 0))
	case "composite":
		c.dropIf("version", isInt(0))
		c.dropIf("composite_attributes", isEmptyDict)
	case "convolution", "dynamic_conv":
		c.dropIf("window_strides", isSplatInt(1))
		if base == "convolution" {
			c.dropIf("padding", isSplatInt(0))
		}
		c.dropIf("lhs_dilation", isSplatInt(1))
		c.dropIf("rhs_dilation", isSplatInt(1))
		c.dropIf("window_reversal", isSplatInt(0))
		c.dropIf("precision_config", allDefaultPrecision)
		if base == "dynamic_conv" && version == 1 {
			c.drop("padding") // v1's attribute, replaced by the operand
		}
	case "custom_call":
		c.dropIf("has_side_effect", isBool(false))
		c.dropIf("backend_config", func(a attr) bool { return isEmptyString(a) || isEmptyDict(a) })
		c.dropIf("api_version", isEnum(enumCustomCallAPIVersion, 1))
		c.dropIf("called_computations", isEmptyArray)
		if ol, rl := c.attrs["operand_layouts"], c.attrs["result_layouts"]; isEmptyArray(ol) && isEmptyArray(rl) {
			c.drop("operand_layouts", "result_layouts")
		}
		c.dropIf("output_operand_aliases", isEmptyArray)
		c.dropIf("result_tilings", isEmptyArray)
	case "dot_general", "dot":
		c.dropIf("precision_config", allDefaultPrecision)
	case "dynamic_broadcast_in_dim":
		c.dropIf("known_expanding_dimensions", isEmptyTensor)
		c.dropIf("known_nonexpanding_dimensions", isEmptyTensor)
	case "gather", "dynamic_gather":
		c.dropIf("indices_are_sorted", isBool(false))
	case "infeed":
		c.dropIf("infeed_config", isEmptyString)
		c.dropIf("layout", isEmptyArray)
	case "outfeed":
		c.dropIf("outfeed_config", isEmptyString)
	case "recv", "send":
		c.dropIf("is_host_transfer", isBool(false))
		c.dropIf("source_target_pairs", isEmptyTensor)
	case "reduce_window":
		c.dropIf("window_strides", isSplatInt(1))
		c.dropIf("base_dilations", isSplatInt(1))
		c.dropIf("window_dilations", isSplatInt(1))
		c.dropIf("padding", isSplatInt(0))
	case "scatter":
		c.dropIf("indices_are_sorted", isBool(false))
		c.dropIf("unique_indices", isBool(false))
	case "select_and_scatter":
		c.dropIf("window_strides", isSplatInt(1))
		c.dropIf("padding", isSplatInt(0))
	case "sort":
		c.dropIf("dimension", isInt(-1))
		c.dropIf("is_stable", isBool(false))
	case "cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one",
		"logistic", "rsqrt", "sine", "sqrt", "tan", "tanh":
		c.dropIf("result_accuracy", isDefaultAccuracy)
	}
}

// take removes and returns the named attributes; false if one is missing.
func (c *conv) take(names ...string) ([]attr, bool) {
	out := make([]attr, len(names))
	for i, n := range names {
		a, ok := c.attrs[n]
		if !ok {
			c.p.fail(c.o, ErrBytecode, "op %s lacks attribute %s", c.p.opName(c.o), n)
			return nil, false
		}
		out[i] = a
	}
	c.drop(names...)
	return out, true
}

// ints reads a VHLO integer tensor (dimension lists) as int64s.
func (c *conv) ints(a attr) []int64 {
	t, ok := a.(aTensor)
	var v []int64
	if ok {
		v, ok = tensorInts(t)
	}
	if !ok {
		c.p.fail(c.o, ErrBytecode, "op %s: expected an integer tensor", c.p.opName(c.o))
	}
	return v
}

// int reads a VHLO integer.
func (c *conv) int(a attr) int64 {
	i, ok := a.(aInt)
	if !ok {
		c.p.fail(c.o, ErrBytecode, "op %s: expected an integer", c.p.opName(c.o))
	}
	return signedValue(i)
}

func dims(v []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// structAttr prints #stablehlo.<kind><a = [..], b = N>, leaving out empty lists and
// zeros as StableHLO's printer does.
func structAttr(kind string, fields ...any) string {
	var b strings.Builder
	b.WriteString("#stablehlo." + kind + "<")
	sep := ""
	for i := 0; i+1 < len(fields); i += 2 {
		name := fields[i].(string)
		switch v := fields[i+1].(type) {
		case []int64:
			if len(v) == 0 {
				continue
			}
			b.WriteString(sep + name + " = " + dims(v))
		case int64:
			if v == 0 {
				continue
			}
			b.WriteString(sep + name + " = " + strconv.FormatInt(v, 10))
		}
		sep = ", "
	}
	b.WriteByte('>')
	return b.String()
}

func (c *conv) add(name, text string) { c.out = append(c.out, textAttr{name, text}) }

// implode puts back together the attributes VHLO keeps apart.
func (c *conv) implode(base string, version int) {
	switch base {
	case "convolution", "dynamic_conv":
		a, ok := c.take("input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
			"kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions",
			"output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions")
		if !ok {
			return
		}
		var b strings.Builder
		b.WriteString("#stablehlo.conv<raw ")
		b.WriteString("input_batch_dimension = " + strconv.FormatInt(c.int(a[0]), 10))
		b.WriteString(", input_feature_dimension = " + strconv.FormatInt(c.int(a[1]), 10))
		b.WriteString(", input_spatial_dimensions = " + dims(c.ints(a[2])))
		b.WriteString(", kernel_input_feature_dimension = " + strconv.FormatInt(c.int(a[3]), 10))
		b.WriteString(", kernel_output_feature_dimension = " + strconv.FormatInt(c.int(a[4]), 10))
		b.WriteString(", kernel_spatial_dimensions = " + dims(c.ints(a[5])))
		b.WriteString(", output_batch_dimension = " + strconv.FormatInt(c.int(a[6]), 10))
		b.WriteString(", output_feature_dimension = " + strconv.FormatInt(c.int(a[7]), 10))
		b.WriteString(", output_spatial_dimensions = " + dims(c.ints(a[8])) + ">")
		c.add("dimension_numbers", b.String())
	case "dot_general":
		a, ok := c.take("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions", "rhs_contracting_dimensions")
		if !ok {
			return
		}
		c.add("dot_dimension_numbers", structAttr("dot",
			"lhs_batching_dimensions", c.ints(a[0]), "rhs_batching_dimensions", c.ints(a[1]),
			"lhs_contracting_dimensions", c.ints(a[2]), "rhs_contracting_dimensions", c.ints(a[3])))
		if version >= 2 {
			c.dotAlgorithm()
		}
	case "gather", "dynamic_gather":
		c.indexDims("dimension_numbers", "gather", version,
			"offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims", "start_index_map")
	case "scatter":
		c.indexDims("scatter_dimension_numbers", "scatter", version,
			"update_window_dims", "inserted_window_dims", "input_batching_dims", "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")
	case "recv", "send":
		a, ok := c.take("channel_id", "channel_type")
		if !ok {
			return
		}
		c.add("channel_handle", "#stablehlo.channel_handle<handle = "+strconv.FormatInt(c.int(a[0]), 10)+
			", type = "+strconv.FormatInt(c.int(a[1]), 10)+">")
	}
}

// indexDims implodes the dimension numbers of a gather or scatter (kind) into the struct
// attribute name: two dimension lists, the two batching lists (from VHLO version 2 on; none
// before), the index map, then index_vector_dim.
func (c *conv) indexDims(name, kind string, version int, window, inserted, batch, indexBatch, indexMap string) {
	names := []string{window, inserted, batch, indexBatch, indexMap}
	if version < 2 {
		names = []string{window, inserted, indexMap}
	}
	a, ok := c.take(append(names, "index_vector_dim")...)
	if !ok {
		return
	}
	var batchDims, indexBatchDims []int64
	i := 2
	if version >= 2 {
		batchDims, indexBatchDims = c.ints(a[2]), c.ints(a[3])
		i = 4
	}
	c.add(name, structAttr(kind, window, c.ints(a[0]), inserted, c.ints(a[1]),
		batch, batchDims, indexBatch, indexBatchDims,
		indexMap, c.ints(a[i]), "index_vector_dim", c.int(a[i+1])))
}

func (c *conv) dotAlgorithm() {
	names := []string{"lhs_precision_type", "rhs_precision_type", "accumulation_type", "lhs_component_count",
		"rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation"}
	a, ok := c.take(names...)
	if !ok {
		return
	}
	none := 0
	for _, x := range a {
		if t, ok := x.(aType); ok {
			if _, isNone := t.t.(tNone); isNone {
				none++
			}
		}
	}
	if none == len(a) {
		return
	}
	if none != 0 {
		c.p.fail(c.o, ErrBytecode, "dot_general: a dot algorithm with some parts unset")
		return
	}
	var b strings.Builder
	b.WriteString("#stablehlo.dot_algorithm<")
	for i, n := range names[:3] {
		t, ok := a[i].(aType)
		if !ok {
			c.p.fail(c.o, ErrBytecode, "dot_general: %s is not a type", n)
			return
		}
		b.WriteString(n + " = " + c.p.typeText(t.t) + ", ")
	}
	for i, n := range names[3:6] {
		b.WriteString(n + " = " + strconv.FormatInt(c.int(a[3+i]), 10) + ", ")
	}
	imprecise, ok := a[6].(aBool)
	if !ok {
		c.p.fail(c.o, ErrBytecode, "dot_general: allow_imprecise_accumulation is not a boolean")
		return
	}
	b.WriteString("allow_imprecise_accumulation = " + strconv.FormatBool(bool(imprecise)) + ">")
	c.add("algorithm", b.String())
}

// denseI64Attrs lists, by op, the attributes that are integer tensors in VHLO and dense
// i64 arrays in StableHLO.
var denseI64Attrs = map[string][]string{
	"fft":                      {"fft_length"},
	"broadcast":                {"broadcast_sizes"},
	"dynamic_slice":            {"slice_sizes"},
	"reverse":                  {"dimensions"},
	"transpose":                {"permutation"},
	"pad":                      {"edge_padding_low", "edge_padding_high", "interior_padding"},
	"slice":                    {"start_indices", "limit_indices", "strides"},
	"broadcast_in_dim":         {"broadcast_dimensions"},
	"dynamic_broadcast_in_dim": {"broadcast_dimensions", "known_expanding_dimensions", "known_nonexpanding_dimensions"},
	"select_and_scatter":       {"window_dimensions", "window_strides"},
	"reduce_window":            {"window_dimensions", "window_strides", "base_dilations", "window_dilations"},
	"map":                      {"dimensions"},
	"reduce":                   {"dimensions"},
	"gather":                   {"slice_sizes"},
	"convolution":              {"lhs_dilation", "rhs_dilation", "window_strides"},
	"dynamic_conv":             {"lhs_dilation", "rhs_dilation", "window_strides"},
}

// collectives are the ops whose channel_id becomes a channel_handle.
var collectives = map[string]bool{
	"all_gather": true, "all_reduce": true, "all_to_all": true, "collective_permute": true,
	"reduce_scatter": true, "collective_broadcast": true, "collective_reduce": true,
}

// special converts one attribute of a VHLO op whose StableHLO form differs from the
// generic conversion, or converts it generically.
func (c *conv) special(base, name string, a attr) string {
	switch {
	case collectives[base]:
		switch name {
		case "channel_id":
			return "#stablehlo.channel_handle<handle = " + strconv.FormatInt(c.int(a), 10) + ", type = 0>"
		case "use_global_device_ids", "has_dynamic_root":
			if b, ok := a.(aBool); ok && bool(b) {
				return ""
			}
		}
	case base == "custom_call":
		if name == "called_computations" {
			l, ok := a.(aArray)
			if !ok {
				c.p.fail(c.o, ErrBytecode, "custom_call: called_computations is not an array")
				return ""
			}
			parts := make([]string, len(l))
			for i, e := range l {
				parts[i] = c.symbol(e)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
	case base == "composite":
		if name == "decomposition" {
			return c.symbol(a)
		}
	case base == "call":
		if name == "callee" {
			return c.symbol(a)
		}
	}
	for _, n := range denseI64Attrs[base] {
		if n == name {
			return "array<i64" + prefixColon(joinInts(c.ints(a))) + ">"
		}
	}
	if (base == "convolution" || base == "dynamic_conv") && name == "window_reversal" {
		v := c.ints(a)
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatBool(x != 0)
		}
		return "array<i1" + prefixColon(strings.Join(s, ", ")) + ">"
	}
	return c.p.attrText(c.o, a)
}

func prefixColon(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

func (c *conv) symbol(a attr) string {
	s, ok := a.(aString)
	if !ok {
		c.p.fail(c.o, ErrBytecode, "op %s: symbol name is not a string", c.p.opName(c.o))
		return ""
	}
	return mlir.Symbol(s.s)
}

// dict prints {name = value, ...} with values converted generically. A unit value
// prints as the bare name.
func (p *printer) dict(o *op, attrs []nattr) {
	out := make([]textAttr, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, textAttr{a.name, p.attrText(o, a.a)})
	}
	p.textDict(out)
}

func (p *printer) textDict(attrs []textAttr) {
	p.b.WriteByte('{')
	for i, a := range attrs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(attrName(a.name))
		if a.text != "" {
			p.b.WriteString(" = " + a.text)
		}
	}
	p.b.WriteByte('}')
}

// attrName prints a dictionary key: bare when it is an MLIR bare identifier, else quoted.
func attrName(s string) string {
	if isBareIdent(s) {
		return s
	}
	return mlir.Quote(s)
}

func isBareIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '$' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// attrText converts an attribute generically to StableHLO text; "" is a unit attribute.
func (p *printer) attrText(o *op, a attr) string {
	b := p.buf()
	p.writeAttr(o, b, a)
	return b.String()
}

var enumAttrNames = map[enumKind]string{
	enumComparisonDirection: "comparison_direction",
	enumComparisonType:      "comparison_type",
	enumFftType:             "fft_type",
	enumPrecision:           "precision",
	enumRngAlgorithm:        "rng_algorithm",
	enumRngDistribution:     "rng_distribution",
	enumTranspose:           "transpose",
	enumResultAccuracyMode:  "result_accuracy_mode",
}

func (p *printer) writeAttr(o *op, b *textBuf, a attr) {
	if b.done() {
		return
	}
	switch a := a.(type) {
	case aArray:
		b.WriteByte('[')
		for i, e := range a {
			if b.done() {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			p.writeAttr(o, b, e)
		}
		b.WriteByte(']')
	case aDict:
		b.WriteByte('{')
		for i, e := range p.named(o, a) {
			if b.done() {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(attrName(e.name))
			if _, unit := e.a.(aUnit); !unit {
				b.WriteString(" = ")
				p.writeAttr(o, b, e.a)
			}
		}
		b.WriteByte('}')
	case aString:
		b.WriteString(mlir.Quote(a.s))
		if a.typ != nil {
			b.WriteString(" : " + p.typeText(a.typ))
		}
	case aBool:
		b.WriteString(strconv.FormatBool(bool(a)))
	case aInt:
		if it, ok := a.typ.(tInt); ok && it.width == 1 {
			b.WriteString(strconv.FormatBool(a.v != 0))
			return
		}
		b.WriteString(intText(a.typ, a.v) + " : " + p.typeText(a.typ))
	case aFloat:
		b.WriteString(floatText(a.typ, a.bits) + " : " + p.typeText(a.typ))
	case aTensor:
		p.writeDense(o, b, a.typ, a.data)
	case aResource:
		if a.handle == nil || !a.handle.found {
			p.fail(o, ErrUnsupported, "dense resource without data")
			return
		}
		p.writeDense(o, b, a.typ, a.handle.data)
	case aEnum:
		if a.kind == enumCustomCallAPIVersion {
			b.WriteString(strconv.FormatUint(a.v, 10) + " : i32")
			return
		}
		b.WriteString("#stablehlo<" + enumAttrNames[a.kind] + " " + enumNames[a.kind][a.v] + ">")
	case aType:
		writeType(b, a.t)
	case aUnit:
		b.WriteString("unit")
	case aSymRef:
		b.WriteString(mlir.Symbol(a.root))
		for _, n := range a.nested {
			if b.done() {
				return
			}
			b.WriteString("::" + mlir.Symbol(n))
		}
	case aDenseArray:
		p.writeDenseArray(o, b, a)
	case aDenseStrings:
		p.writeDenseStrings(o, b, a)
	case aOutputOperandAlias:
		b.WriteString("#stablehlo.output_operand_alias<output_tuple_indices = " + dims(a.outputTupleIndices) +
			", operand_index = " + strconv.FormatInt(a.operandIndex, 10) +
			", operand_tuple_indices = " + dims(a.operandTupleIndices) + ">")
	case aResultAccuracy:
		b.WriteString("#stablehlo.result_accuracy<")
		if a.atol<<1 != 0 {
			b.WriteString("atol = " + floatText(tFloat("f64"), a.atol) + ", ")
		}
		if a.rtol<<1 != 0 {
			b.WriteString("rtol = " + floatText(tFloat("f64"), a.rtol) + ", ")
		}
		if a.ulps != 0 {
			b.WriteString("ulps = " + strconv.FormatInt(a.ulps, 10) + ", ")
		}
		b.WriteString("mode = ")
		p.writeAttr(o, b, a.mode)
		b.WriteByte('>')
	case aSubAxisInfo:
		b.WriteString("#stablehlo.sub_axis_info<(" + strconv.FormatInt(a.preSize, 10) + ")" + strconv.FormatInt(a.size, 10) + ">")
	case aAxisRef:
		b.WriteString("#stablehlo.axis_ref<name = ")
		p.writeAttr(o, b, a.name)
		if a.subAxis != nil {
			b.WriteString(", sub_axis_info = ")
			p.writeAttr(o, b, a.subAxis)
		}
		b.WriteByte('>')
	case aMeshAxis:
		b.WriteString("#stablehlo.mesh_axis<name = ")
		p.writeAttr(o, b, a.name)
		b.WriteString(", size = " + strconv.FormatInt(a.size, 10) + ">")
	case aMesh:
		b.WriteString("#stablehlo.mesh<axes=[")
		if l, ok := a.axes.(aArray); ok {
			for i, e := range l {
				if b.done() {
					return
				}
				if i > 0 {
					b.WriteString(", ")
				}
				p.writeAttr(o, b, e)
			}
		}
		b.WriteString("]")
		if a.deviceIDs != nil {
			b.WriteString(", device_ids=")
			p.writeAttr(o, b, a.deviceIDs)
		}
		b.WriteByte('>')
	case aReplicaGroupMeshAxes:
		b.WriteString("#stablehlo.replica_group_mesh_axes<mesh = ")
		if s, ok := a.mesh.(aString); ok {
			b.WriteString(mlir.Symbol(s.s))
		} else {
			p.writeAttr(o, b, a.mesh)
		}
		b.WriteString(", axes = ")
		p.writeAttr(o, b, a.axes)
		b.WriteByte('>')
	case aTypeExtensions:
		writeEncoding(b, a)
	case aAsm:
		b.WriteString(string(a))
	case nil:
		p.fail(o, ErrBytecode, "missing attribute")
	default:
		if writeSdy(b, a) {
			return
		}
		p.fail(o, ErrUnsupported, "attribute %T in %s", a, p.opName(o))
	}
}

// signedValue sign-extends an integer attribute's bits (unsigned types are not).
func signedValue(i aInt) int64 {
	t, ok := i.typ.(tInt)
	if !ok {
		return int64(i.v)
	}
	if t.sign == 2 || t.width >= 64 {
		return int64(i.v)
	}
	shift := 64 - t.width
	return int64(i.v<<shift) >> shift
}

func intText(t typ, v uint64) string {
	if it, ok := t.(tInt); ok && it.sign == 2 {
		return strconv.FormatUint(v&mask(it.width), 10)
	}
	return strconv.FormatInt(signedValue(aInt{typ: t, v: v}), 10)
}

// floatText prints a float of type t with bits as an MLIR literal that parses back to
// the same bits: the shortest decimal that reads back as the same float64 (exact for
// f64, f32, f16 and bf16, whose values are all float64 values), and the hexadecimal bit
// pattern for NaN, infinities and the other float types.
func floatText(t typ, bits uint64) string {
	name, _ := t.(tFloat)
	v, ok := floatValue(string(name), bits)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		w := (floatBits[string(name)] + 3) / 4
		if w == 0 {
			w = 1
		}
		s := strconv.FormatUint(bits, 16)
		for len(s) < w {
			s = "0" + s
		}
		return "0x" + strings.ToUpper(s)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64)
	if !strings.Contains(s, ".") {
		i := strings.IndexByte(s, 'e')
		s = s[:i] + ".0" + s[i:]
	}
	return s
}

func floatValue(name string, bits uint64) (float64, bool) {
	switch name {
	case "f64":
		return math.Float64frombits(bits), true
	case "f32":
		return float64(math.Float32frombits(uint32(bits))), true
	case "bf16":
		return float64(shapes.BFloat16Value(uint16(bits))), true
	case "f16":
		return float64(shapes.Float16Value(uint16(bits))), true
	}
	return 0, false
}

// elemSize is the number of bytes one element of type t takes in dense storage, and
// whether the reader knows it.
func elemSize(t typ) (int, bool) {
	switch t := t.(type) {
	case tInt:
		return (t.width + 7) / 8, t.width > 0 && t.width <= 64
	case tBool:
		return 1, true
	case tIndex:
		return 8, true
	case tFloat:
		w := floatBits[string(t)]
		return (w + 7) / 8, w > 0 && w <= 64
	case tComplex:
		s, ok := elemSize(t.elem)
		return 2 * s, ok
	}
	return 0, false
}

// maxSplatInts bounds the integer splats tensorInts expands.
const maxSplatInts = 1 << 16

// tensorInts reads the elements of an integer or boolean tensor attribute.
func tensorInts(t aTensor) ([]int64, bool) {
	tt, ok := t.typ.(tTensor)
	if !ok {
		return nil, false
	}
	size, ok := elemSize(tt.elem)
	if !ok {
		return nil, false
	}
	switch tt.elem.(type) {
	case tInt, tBool, tIndex:
	default:
		return nil, false
	}
	n, ok := elementCount(tt.shape)
	if !ok {
		return nil, false
	}
	if uint64(len(t.data)) == uint64(size) && n != 1 {
		if n > maxSplatInts {
			return nil, false // no dimension list is this long
		}
		v := readInt(tt.elem, t.data)
		out := make([]int64, n)
		for i := range out {
			out[i] = v
		}
		return out, true
	}
	if n > uint64(len(t.data)) || uint64(len(t.data)) != n*uint64(size) {
		return nil, false
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = readInt(tt.elem, t.data[i*size:(i+1)*size])
	}
	return out, true
}

// readInt reads one little-endian integer element, sign-extended unless unsigned.
func readInt(t typ, b []byte) int64 {
	var buf [8]byte
	copy(buf[:], b)
	v := binary.LittleEndian.Uint64(buf[:])
	switch t := t.(type) {
	case tBool:
		return int64(v & 1)
	case tIndex:
		return int64(v)
	case tInt:
		return signedValue(aInt{typ: t, v: v & mask(t.width)})
	}
	return int64(v)
}

// writeDense prints dense<...> : type for a tensor of raw little-endian elements (one
// element for a splat): integers and booleans as literals, floats as a splat literal or
// the raw bytes in hexadecimal.
func (p *printer) writeDense(o *op, b *textBuf, t typ, data []byte) {
	tt, ok := t.(tTensor)
	if !ok {
		p.fail(o, ErrUnsupported, "dense elements of type %s", shortType(t))
		return
	}
	size, ok := elemSize(tt.elem)
	if !ok {
		p.fail(o, ErrUnsupported, "dense elements of element type %s", shortType(tt.elem))
		return
	}
	n, ok := elementCount(tt.shape)
	if !ok {
		p.fail(o, ErrBytecode, "dense elements of a dynamic or too large shape %s", shortType(t))
		return
	}
	splat := len(data) == size && n >= 1
	if !splat && (n > uint64(len(data)) || uint64(len(data)) != n*uint64(size)) {
		p.fail(o, ErrBytecode, "dense elements of %s: %d bytes for %d elements of %d bytes", shortType(t), len(data), n, size)
		return
	}
	b.WriteString("dense<")
	switch {
	case n == 0:
	case splat:
		p.writeElem(b, tt.elem, data)
	default:
		switch tt.elem.(type) {
		case tInt, tBool, tIndex:
			p.writeNested(b, tt.elem, tt.shape, data, size)
		default:
			b.WriteString(`"0x`)
			const hex = "0123456789ABCDEF"
			for _, c := range data {
				if b.done() {
					return
				}
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			}
			b.WriteByte('"')
		}
	}
	b.WriteString("> : ")
	writeType(b, t)
}

// writeElem prints one element.
func (p *printer) writeElem(b *textBuf, t typ, data []byte) {
	switch t := t.(type) {
	case tBool:
		b.WriteString(strconv.FormatBool(data[0] != 0))
	case tInt:
		if t.width == 1 {
			b.WriteString(strconv.FormatBool(data[0]&1 != 0))
			return
		}
		var buf [8]byte
		copy(buf[:], data)
		b.WriteString(intText(t, binary.LittleEndian.Uint64(buf[:])&mask(t.width)))
	case tIndex:
		b.WriteString(strconv.FormatInt(readInt(t, data), 10))
	case tFloat:
		var buf [8]byte
		copy(buf[:], data)
		b.WriteString(floatText(t, binary.LittleEndian.Uint64(buf[:])&mask(floatBits[string(t)])))
	case tComplex:
		h := len(data) / 2
		b.WriteByte('(')
		p.writeElem(b, t.elem, data[:h])
		b.WriteString(", ")
		p.writeElem(b, t.elem, data[h:])
		b.WriteByte(')')
	}
}

// writeNested prints the elements as nested lists following shape.
func (p *printer) writeNested(b *textBuf, t typ, shape []int64, data []byte, size int) {
	if len(shape) == 0 {
		p.writeElem(b, t, data[:size])
		return
	}
	b.WriteByte('[')
	inner := len(data) / int(max(shape[0], 1))
	for i := int64(0); i < shape[0]; i++ {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		p.writeNested(b, t, shape[1:], data[int(i)*inner:int(i+1)*inner], size)
	}
	b.WriteByte(']')
}

// writeDenseArray prints array<T: a, b, ...>.
func (p *printer) writeDenseArray(o *op, b *textBuf, a aDenseArray) {
	size, ok := elemSize(a.elem)
	if !ok {
		p.fail(o, ErrUnsupported, "dense array of %s", shortType(a.elem))
		return
	}
	if it, isInt := a.elem.(tInt); isInt && it.width == 1 {
		size = 1
	}
	if a.n > uint64(len(a.data)) || uint64(len(a.data)) != a.n*uint64(size) {
		p.fail(o, ErrBytecode, "dense array: %d bytes for %d elements", len(a.data), a.n)
		return
	}
	b.WriteString("array<")
	writeType(b, a.elem)
	for i := uint64(0); i < a.n; i++ {
		if b.done() {
			return
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		p.writeElem(b, a.elem, a.data[i*uint64(size):(i+1)*uint64(size)])
	}
	b.WriteByte('>')
}

func (p *printer) writeDenseStrings(o *op, b *textBuf, a aDenseStrings) {
	tt, ok := a.typ.(tTensor)
	if !ok {
		p.fail(o, ErrUnsupported, "dense strings of type %s", shortType(a.typ))
		return
	}
	b.WriteString("dense<")
	if len(a.strs) == 1 {
		b.WriteString(mlir.Quote(a.strs[0]))
	} else {
		var rec func(shape []int64, strs []string)
		rec = func(shape []int64, strs []string) {
			if len(shape) == 0 {
				b.WriteString(mlir.Quote(strs[0]))
				return
			}
			b.WriteByte('[')
			inner := len(strs) / int(max(shape[0], 1))
			for i := int64(0); i < shape[0]; i++ {
				if b.done() {
					return
				}
				if i > 0 {
					b.WriteString(", ")
				}
				rec(shape[1:], strs[int(i)*inner:int(i+1)*inner])
			}
			b.WriteByte(']')
		}
		rec(tt.shape, a.strs)
	}
	b.WriteString("> : ")
	writeType(b, a.typ)
}
