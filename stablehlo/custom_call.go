package stablehlo

import "slices"

// CustomCallParams are the parameters of stablehlo.custom_call: the target and its
// attributes (backend_config, mhlo.sharding, ...) in print order.
type CustomCallParams struct {
	Target string
	Attrs  []Attr
}

// CustomCall calls the backend function target (`stablehlo.custom_call @target`) on args;
// it returns one value per result shape. attrs are printed in the op's attribute dictionary
// as given. Params: CustomCallParams. The target must be an MLIR identifier known to the
// backend (lower uses @Sharding, @SPMDFullToShardShape and @SPMDShardToFullShape).
func (f *Function) CustomCall(target string, args []Value, results []Shape, attrs ...Attr) []Value {
	const opName = "custom_call"
	vals, ok := f.Operands(opName, args...)
	if !ok {
		return make([]Value, len(results))
	}
	if target == "" {
		f.failf(opName, -1, nil, ErrFunction, "empty custom call target")
		return make([]Value, len(results))
	}
	o := &Op{name: "stablehlo.custom_call", operands: unwrapValues(vals),
		params: CustomCallParams{Target: target, Attrs: slices.Clone(attrs)}, print: printCustomCall}
	return f.emitMulti(o, results)
}

func printCustomCall(p *Printer, o *Op) {
	c := o.params.(CustomCallParams)
	p.customCall(o.results, c.Target, o.operands, c.Attrs)
}
