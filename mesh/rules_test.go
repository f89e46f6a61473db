package mesh

import (
	"errors"
	"testing"
)

func TestLogicalToMesh(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		names []string
		want  string
		err   string
	}{
		// The six flax cases in jax_semantics.md §9 (flax tests/linen/partitioning_test.py).
		{name: "flax basic", rules: []Rule{R("foo", "data"), R("bar", "model"), R("baz")},
			names: []string{"foo", "bar"}, want: "P('data', 'model')"},
		{name: "flax mesh axis used once", rules: []Rule{R("foo", "model"), R("bar", "model"), R("baz", "data")},
			names: []string{"bar", "foo", "baz"}, want: "P(None, 'model', 'data')"},
		{name: "flax all or nothing", rules: []Rule{R("a", "model", "replica"), R("b", "data", "model")},
			names: []string{"a", "b"}, want: "P(('model', 'replica'), None)"},
		{name: "flax none claims", rules: []Rule{R("a"), R("a", "model")},
			names: []string{"a", "b"}, want: "P(None, None)"},
		{name: "flax first rule wins", rules: []Rule{R("baz", "data"), R("bar"), R("foo", "model"), R("foo", "data")},
			names: []string{"baz", "bar", "foo"}, want: "P('data', None, 'model')"},
		{name: "flax unconstrained", rules: []Rule{R("baz", "data"), R("foo", "model", "emb")},
			names: []string{"baz", LogicalUnconstrained, "foo"}, want: "P('data', UNCONSTRAINED, ('model', 'emb'))"},
		// flax.linen.spmd logical_to_mesh_axes docstring example.
		{name: "flax docstring", rules: []Rule{R("batch", "X"), R("features", "X"), R("heads", "Y"), R("batch", "Z")},
			names: []string{"batch", "length", "heads", "features"}, want: "P('X', None, 'Y', None)"},
		{name: "none names pass through", rules: []Rule{R("foo", "data")},
			names: []string{"", "foo", ""}, want: "P(None, 'data', None)"},
		{name: "no rules", rules: nil, names: []string{"foo"}, want: "P(None,)"},
		{name: "scalar", rules: []Rule{R("foo", "data")}, names: []string{}, want: "P()"},
		// §9: a repeated string name is an error; None and UNCONSTRAINED may repeat.
		{name: "duplicate name", rules: []Rule{R("foo", "data")}, names: []string{"foo", "bar", "foo"},
			err: "mesh: logical axis rule: unsupported: dimensions ('foo',) occur more than once in array names ('foo', 'bar', 'foo')"},
		{name: "repeated none ok", rules: []Rule{R("foo", "data")}, names: []string{"", "", "?", "?"},
			want: "P(None, None, UNCONSTRAINED, UNCONSTRAINED)"},
		{name: "bad rule", rules: []Rule{R("", "data")}, names: []string{"foo"},
			err: "mesh: logical axis rule: rule 0 ('', 'data') has an empty logical name"},
		{name: "bad rule axes", rules: []Rule{R("foo", "data", "")}, names: []string{"foo"},
			err: `mesh: logical axis rule: rule 0 for "foo": empty axis name at tuple position 1 of ('data', '')`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := LogicalToMesh(tc.names, tc.rules)
			if wantErr(t, err, tc.err) {
				if !errors.Is(err, ErrRule) {
					t.Errorf("error does not wrap ErrRule")
				}
				return
			}
			if spec.String() != tc.want {
				t.Errorf("got %s, want %s", spec, tc.want)
			}
		})
	}
}

func TestLogicalConstraint(t *testing.T) {
	rules := []Rule{R("foo", "data")}
	tests := []struct {
		name      string
		names     []string
		rules     []Rule
		fallback  RulesFallback
		want      string
		constrain bool
		err       string
	}{
		// jax_semantics.md §9 RulesFallback cases.
		{name: "unsharded", names: []string{"foo", "not_recognized"}, rules: rules, fallback: AxisIsUnsharded,
			want: "P('data', None)", constrain: true},
		{name: "raise", names: []string{"foo", "not_recognized"}, rules: rules, fallback: RaiseError,
			err: "mesh: logical axis rule: axis names ('foo', 'not_recognized') did not match a rule"},
		{name: "no constraint", names: []string{"foo", "not_recognized"}, rules: rules, fallback: NoConstraint,
			constrain: false},
		{name: "raise all matched", names: []string{"foo", ""}, rules: rules, fallback: RaiseError,
			want: "P('data', None)", constrain: true},
		// with_logical_constraint does nothing when the rules are empty.
		{name: "empty rules", names: []string{"foo"}, rules: nil, fallback: RaiseError, constrain: false},
		{name: "nil names", names: nil, rules: rules, fallback: AxisIsUnsharded, constrain: false},
		{name: "bad fallback", names: []string{"foo"}, rules: rules, fallback: 0, err: "invalid fallback RulesFallback(0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, ok, err := LogicalConstraint(tc.names, tc.rules, tc.fallback)
			if wantErr(t, err, tc.err) {
				if !errors.Is(err, ErrRule) {
					t.Errorf("error does not wrap ErrRule")
				}
				return
			}
			if ok != tc.constrain || (ok && spec.String() != tc.want) {
				t.Errorf("got %s, %v; want %s, %v", spec, ok, tc.want, tc.constrain)
			}
		})
	}
}

func TestLogicalSharding(t *testing.T) {
	m := mustMesh(t, nil, []int{4, 2}, "data", "model")
	s, err := LogicalSharding(m, []string{"batch", "embed"}, []Rule{R("batch", "data"), R("embed", "model")})
	if err != nil || s.String() != "NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, Auto)), spec=P('data', 'model'), memory_kind=device)" {
		t.Errorf("LogicalSharding = %v, %v", s, err)
	}
	_, err = LogicalSharding(m, []string{"batch"}, []Rule{R("batch", "pipeline")})
	if !errors.Is(err, ErrUnknownAxis) {
		t.Errorf("unknown mesh axis err = %v", err)
	}
}
