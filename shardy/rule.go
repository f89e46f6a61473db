package shardy

import (
	"slices"
	"strings"
)

// DimMapping is the list of factors one tensor dimension is mapped to in an
// ShardingRule, printed as their symbols run together: `i`, `ij` (the
// dimension is the factors i and j, major to minor), `z_1`. Factor 0 is `i`,
// 1 is `j`, ..., 17 is `z`, then `z_1`, `z_2`, ... as Shardy names them.
//
// DimMapping is an immutable value.
type DimMapping struct {
	factors []int
}

// NewDimMapping returns the mapping of a dimension to factors, major to
// minor. It does not validate (Shardy requires at least one factor, each
// below the rule's factor count).
func NewDimMapping(factors ...int) DimMapping { return DimMapping{factors: slices.Clone(factors)} }

// Factors returns a copy of the factor indices.
func (d DimMapping) Factors() []int { return slices.Clone(d.factors) }

// Equal reports whether d and o map to the same factors.
func (d DimMapping) Equal(o DimMapping) bool { return slices.Equal(d.factors, o.factors) }

// String returns the factor symbols: `ij`; "" for the empty mapping, which a
// TensorMapping prints in full as `#sdy.dim_mapping` (as MLIR does for an
// attribute whose stripped text is empty).
func (d DimMapping) String() string {
	var b strings.Builder
	d.writeTo(&b)
	return b.String()
}

func (d DimMapping) writeTo(b *strings.Builder) {
	for _, f := range d.factors {
		writeFactor(b, f)
	}
}

// writeFactor writes the symbol of factor f: i, j, ..., z for 0 to 17, then
// z_1, z_2, ... (a negative f, which Shardy rejects, prints as z_ and f-17).
func writeFactor(b *strings.Builder, f int) {
	const z = 'z' - 'i'
	if f >= 0 && f <= z {
		b.WriteByte(byte('i' + f))
		return
	}
	b.WriteString("z_")
	writeInt(b, f-z)
}

// TensorMapping is the factor mapping of one operand or result of an
// ShardingRule: one DimMapping per dimension, `[i, jk]`, `[]` for a scalar.
//
// TensorMapping is an immutable value.
type TensorMapping struct {
	dims []DimMapping
}

// NewTensorMapping returns the mapping with one DimMapping per dimension.
func NewTensorMapping(dims ...DimMapping) TensorMapping {
	return TensorMapping{dims: slices.Clone(dims)}
}

// Dims returns a copy of the dimension mappings.
func (t TensorMapping) Dims() []DimMapping { return slices.Clone(t.dims) }

// Rank returns the number of dimensions.
func (t TensorMapping) Rank() int { return len(t.dims) }

// Equal reports whether t and o map the same dimensions to the same factors.
func (t TensorMapping) Equal(o TensorMapping) bool {
	return slices.EqualFunc(t.dims, o.dims, DimMapping.Equal)
}

// String returns `[i, jk]`.
func (t TensorMapping) String() string {
	var b strings.Builder
	t.writeTo(&b)
	return b.String()
}

func (t TensorMapping) writeTo(b *strings.Builder) {
	b.WriteByte('[')
	for i, d := range t.dims {
		if i > 0 {
			b.WriteString(", ")
		}
		if len(d.factors) == 0 {
			b.WriteString(dimMappingPrefix)
			continue
		}
		d.writeTo(b)
	}
	b.WriteByte(']')
}

// ShardingRule is Shardy's `#sdy.op_sharding_rule<...>`: how an op can be
// partitioned, in factors. Each factor has a size; each operand and result
// dimension is mapped to factors (TensorMapping); some factors are reduction,
// need-replication, permutation or blocked-propagation factors; a custom rule
// is one a user wrote for a stablehlo.custom_call:
//
//	#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>
//	#sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>
//
// ShardingRule is an immutable value: the With methods return new values
// and accessors return copies. Construction does not check Shardy's rules
// for it (factor indices in range, no duplicates, ...), and there is no
// Validate for it.
type ShardingRule struct {
	factorSizes       []int
	operands, results []TensorMapping
	// reduction, needReplication, permutation and blocked factors, in that order.
	kinds  [numFactorKinds][]int
	custom bool
}

// The kinds of special factors, in the order Shardy prints them.
const (
	reductionFactors = iota
	needReplicationFactors
	permutationFactors
	blockedPropagationFactors
	numFactorKinds
)

// factorKindNames are the keywords of the factor kinds.
var factorKindNames = [numFactorKinds]string{"reduction", "need_replication", "permutation", "blocked_propagation"}

// NewShardingRule returns the rule with the given factor sizes (factor i
// has size factorSizes[i]) and operand and result mappings, with no special
// factors, not custom.
func NewShardingRule(factorSizes []int, operands, results []TensorMapping) ShardingRule {
	return ShardingRule{factorSizes: slices.Clone(factorSizes), operands: slices.Clone(operands), results: slices.Clone(results)}
}

func (r ShardingRule) clone() ShardingRule {
	r.factorSizes = slices.Clone(r.factorSizes)
	r.operands = slices.Clone(r.operands)
	r.results = slices.Clone(r.results)
	for k := range r.kinds {
		r.kinds[k] = slices.Clone(r.kinds[k])
	}
	return r
}

func (r ShardingRule) withKind(k int, factors []int) ShardingRule {
	r = r.clone()
	r.kinds[k] = slices.Clone(factors)
	if len(r.kinds[k]) == 0 {
		r.kinds[k] = nil
	}
	return r
}

// WithReductionFactors returns r with the factors requiring a reduction
// (such as the contracting dimension of a dot), `reduction={j}`.
func (r ShardingRule) WithReductionFactors(factors ...int) ShardingRule {
	return r.withKind(reductionFactors, factors)
}

// WithNeedReplicationFactors returns r with the factors requiring full
// replication (such as the sorted dimension of a sort), `need_replication={i}`.
func (r ShardingRule) WithNeedReplicationFactors(factors ...int) ShardingRule {
	return r.withKind(needReplicationFactors, factors)
}

// WithPermutationFactors returns r with the factors requiring a
// collective-permute, `permutation={i}`.
func (r ShardingRule) WithPermutationFactors(factors ...int) ShardingRule {
	return r.withKind(permutationFactors, factors)
}

// WithBlockedPropagationFactors returns r with the factors along which
// shardings are not propagated, `blocked_propagation={i}`.
func (r ShardingRule) WithBlockedPropagationFactors(factors ...int) ShardingRule {
	return r.withKind(blockedPropagationFactors, factors)
}

// WithCustom returns r marked as a custom rule (`, custom`) or not.
func (r ShardingRule) WithCustom(custom bool) ShardingRule {
	r = r.clone()
	r.custom = custom
	return r
}

// FactorSizes returns a copy of the factor sizes, by factor index.
func (r ShardingRule) FactorSizes() []int { return slices.Clone(r.factorSizes) }

// NumFactors returns the number of factors.
func (r ShardingRule) NumFactors() int { return len(r.factorSizes) }

// Operands returns a copy of the operand mappings.
func (r ShardingRule) Operands() []TensorMapping { return slices.Clone(r.operands) }

// Results returns a copy of the result mappings.
func (r ShardingRule) Results() []TensorMapping { return slices.Clone(r.results) }

// ReductionFactors returns a copy of the reduction factors.
func (r ShardingRule) ReductionFactors() []int { return slices.Clone(r.kinds[reductionFactors]) }

// NeedReplicationFactors returns a copy of the need-replication factors.
func (r ShardingRule) NeedReplicationFactors() []int {
	return slices.Clone(r.kinds[needReplicationFactors])
}

// PermutationFactors returns a copy of the permutation factors.
func (r ShardingRule) PermutationFactors() []int {
	return slices.Clone(r.kinds[permutationFactors])
}

// BlockedPropagationFactors returns a copy of the blocked-propagation factors.
func (r ShardingRule) BlockedPropagationFactors() []int {
	return slices.Clone(r.kinds[blockedPropagationFactors])
}

// IsCustom reports whether r is a custom rule.
func (r ShardingRule) IsCustom() bool { return r.custom }

// Equal reports whether r and o are the same rule (same text).
func (r ShardingRule) Equal(o ShardingRule) bool {
	if !slices.Equal(r.factorSizes, o.factorSizes) || r.custom != o.custom ||
		!slices.EqualFunc(r.operands, o.operands, TensorMapping.Equal) ||
		!slices.EqualFunc(r.results, o.results, TensorMapping.Equal) {
		return false
	}
	for k := range r.kinds {
		if !slices.Equal(r.kinds[k], o.kinds[k]) {
			return false
		}
	}
	return true
}

// String returns the attribute text:
// `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`.
func (r ShardingRule) String() string {
	var b strings.Builder
	b.WriteString(ruleAttrPrefix)
	r.writeTo(&b)
	return b.String()
}

// Stripped returns the text without the `#sdy.op_sharding_rule` prefix:
// `<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`.
func (r ShardingRule) Stripped() string {
	var b strings.Builder
	r.writeTo(&b)
	return b.String()
}

func (r ShardingRule) writeTo(b *strings.Builder) {
	b.WriteByte('<')
	writeMappings(b, r.operands)
	b.WriteString("->")
	writeMappings(b, r.results)
	if len(r.factorSizes) > 0 {
		b.WriteString(" {")
		for i, s := range r.factorSizes {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFactor(b, i)
			b.WriteByte('=')
			writeInt(b, s)
		}
		b.WriteByte('}')
	}
	for k, factors := range r.kinds {
		if len(factors) == 0 {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(factorKindNames[k])
		b.WriteString("={")
		for i, f := range factors {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFactor(b, f)
		}
		b.WriteByte('}')
	}
	if r.custom {
		b.WriteString(", custom")
	}
	b.WriteByte('>')
}

func writeMappings(b *strings.Builder, ms []TensorMapping) {
	b.WriteByte('(')
	for i, m := range ms {
		if i > 0 {
			b.WriteString(", ")
		}
		m.writeTo(b)
	}
	b.WriteByte(')')
}
