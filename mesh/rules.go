package mesh

import (
	"fmt"
	"slices"
	"strings"
)

// LogicalUnconstrained is the logical dimension name standing for JAX's
// P.UNCONSTRAINED in LogicalToMesh; it passes through unchanged. The empty
// name "" stands for None (a replicated dimension).
const LogicalUnconstrained = "?"

// Rule maps one logical dimension name ("batch", "embed") to mesh axes: a
// single axis, a tuple (first major), None (the dimension is claimed and
// replicated) or Unconstrained (flax's logical axis rules).
type Rule struct {
	Logical string
	Mesh    Dim
}

// R returns the rule logical -> meshAxes: R("batch", "data"),
// R("heads", "model", "replica") for a tuple, R("embed") for None.
func R(logical string, meshAxes ...string) Rule {
	return Rule{Logical: logical, Mesh: Axes(meshAxes...)}
}

// String returns the rule as flax writes it: ('batch', 'data').
func (r Rule) String() string { return "(" + pyQuote(r.Logical) + ", " + r.Mesh.String() + ")" }

// RulesFallback says what a logical constraint does with a dimension no
// rule matched (flax's RulesFallback).
type RulesFallback uint8

const (
	// AxisIsUnsharded replicates unmatched dimensions (flax's default).
	AxisIsUnsharded RulesFallback = iota + 1
	// RaiseError makes an unmatched dimension an error wrapping ErrRule.
	RaiseError
	// NoConstraint drops the whole constraint when a dimension is unmatched.
	NoConstraint
)

// String returns flax's enum value name, e.g. "AXIS_IS_UNSHARDED".
func (f RulesFallback) String() string {
	switch f {
	case AxisIsUnsharded:
		return "AXIS_IS_UNSHARDED"
	case RaiseError:
		return "RAISE_ERROR"
	case NoConstraint:
		return "NO_CONSTRAINT"
	}
	return fmt.Sprintf("RulesFallback(%d)", uint8(f))
}

// LogicalToMesh maps logical dimension names to a PartitionSpec with flax's
// algorithm (flax.linen.spmd.logical_to_mesh_axes): rules are tried in
// order; a rule applies to the first dimension carrying its logical name if
// that dimension is still unassigned and none of the rule's mesh axes is
// already used (all or nothing), so the first matching rule wins. A rule to
// None claims its dimension. Unmatched dimensions become None. "" is None
// and LogicalUnconstrained is Unconstrained in names.
//
// It returns an error wrapping ErrRule when a logical name other than "" and
// LogicalUnconstrained repeats in names, or a rule is malformed.
func LogicalToMesh(names []string, rules []Rule) (PartitionSpec, error) {
	dims, _, err := logicalToMesh(names, rules)
	if err != nil {
		return PartitionSpec{}, err
	}
	return SpecOf(dims...), nil
}

// LogicalConstraint is LogicalToMesh for a sharding constraint (flax's
// with_logical_constraint), applying fallback to unmatched dimensions. It
// reports constrain == false, meaning "leave the value unconstrained", when
// rules is empty, names is nil, or fallback is NoConstraint and a dimension
// is unmatched. With RaiseError an unmatched dimension is an error wrapping
// ErrRule.
func LogicalConstraint(names []string, rules []Rule, fallback RulesFallback) (spec PartitionSpec, constrain bool, err error) {
	if fallback < AxisIsUnsharded || fallback > NoConstraint {
		return PartitionSpec{}, false, fmt.Errorf("mesh: %w: invalid fallback %v", ErrRule, fallback)
	}
	if len(rules) == 0 || names == nil {
		return PartitionSpec{}, false, nil
	}
	dims, unmatched, err := logicalToMesh(names, rules)
	if err != nil {
		return PartitionSpec{}, false, err
	}
	if unmatched && fallback == RaiseError {
		return PartitionSpec{}, false, fmt.Errorf("mesh: %w: axis names %s did not match a rule", ErrRule, logicalTuple(names))
	}
	if unmatched && fallback == NoConstraint {
		return PartitionSpec{}, false, nil
	}
	return SpecOf(dims...), true, nil
}

// LogicalSharding returns the NamedSharding of m for the logical names under
// rules (flax's logical_to_mesh_sharding). Errors are those of LogicalToMesh
// and NewNamedSharding.
func LogicalSharding(m Mesh, names []string, rules []Rule) (NamedSharding, error) {
	spec, err := LogicalToMesh(names, rules)
	if err != nil {
		return NamedSharding{}, err
	}
	return NewNamedSharding(m, spec)
}

// logicalToMesh returns the mesh dims and whether some named dimension was
// left unassigned (unassigned dims are None in the result).
func logicalToMesh(names []string, rules []Rule) ([]Dim, bool, error) {
	var dups []string
	for i, n := range names {
		if n == "" || n == LogicalUnconstrained {
			continue
		}
		if slices.Contains(names[:i], n) && !slices.Contains(dups, n) {
			dups = append(dups, n)
		}
	}
	if len(dups) > 0 {
		return nil, false, fmt.Errorf("mesh: %w: unsupported: dimensions %s occur more than once in array names %s",
			ErrRule, pyStrTuple(dups), logicalTuple(names))
	}
	for i, r := range rules {
		if r.Logical == "" {
			return nil, false, fmt.Errorf("mesh: %w: rule %d %s has an empty logical name", ErrRule, i, r)
		}
		if err := r.Mesh.Err(); err != nil {
			return nil, false, fmt.Errorf("mesh: %w: rule %d for %q: %s", ErrRule, i, r.Logical, r.Mesh.axes)
		}
	}
	dims := make([]Dim, len(names))
	assigned := make([]bool, len(names))
	var usedAxes []string
	for i, n := range names {
		switch n {
		case "":
			assigned[i] = true
		case LogicalUnconstrained:
			dims[i], assigned[i] = Unconstrained, true
		}
	}
	for _, r := range rules {
		pos := slices.Index(names, r.Logical)
		if pos < 0 || assigned[pos] {
			continue
		}
		axes := r.Mesh.Axes()
		if slices.ContainsFunc(axes, func(a string) bool { return slices.Contains(usedAxes, a) }) {
			continue
		}
		dims[pos], assigned[pos] = r.Mesh, true
		usedAxes = append(usedAxes, axes...)
	}
	return dims, slices.Contains(assigned, false), nil
}

// logicalTuple formats logical names as flax prints them: ('foo', None).
func logicalTuple(names []string) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		switch n {
		case "":
			b.WriteString("None")
		case LogicalUnconstrained:
			b.WriteString("UNCONSTRAINED")
		default:
			b.WriteString(pyQuote(n))
		}
	}
	if len(names) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}
