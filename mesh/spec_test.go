package mesh

import (
	"errors"
	"slices"
	"testing"
)

func TestPartitionSpec(t *testing.T) {
	tests := []struct {
		name    string
		entries []any
		str     string
		len     int
		err     string
	}{
		// jax_semantics.md §3: repr P('x',), P('x', 'y'), P() (0.10+).
		{name: "empty", entries: nil, str: "P()", len: 0},
		{name: "one", entries: []any{"x"}, str: "P('x',)", len: 1},
		{name: "two", entries: []any{"x", "y"}, str: "P('x', 'y')", len: 2},
		{name: "none", entries: []any{"x", nil, Axes("x", "y")}, str: "P('x', None, ('x', 'y'))", len: 3},
		// §3: falsy entries ((), '', []) become None.
		{name: "empty tuple is None", entries: []any{[]string{}, "x"}, str: "P(None, 'x')", len: 2},
		{name: "empty string is None", entries: []any{"", "x"}, str: "P(None, 'x')", len: 2},
		{name: "Axes() is None", entries: []any{Axes()}, str: "P(None,)", len: 1},
		// §3: a length-1 tuple becomes its element.
		{name: "1-tuple", entries: []any{[]string{"x"}}, str: "P('x',)", len: 1},
		{name: "1-tuple any", entries: []any{[]any{"x"}}, str: "P('x',)", len: 1},
		{name: "list becomes tuple", entries: []any{[]string{"a", "b"}}, str: "P(('a', 'b'),)", len: 1},
		{name: "unconstrained", entries: []any{Unconstrained, "x"}, str: "P(UNCONSTRAINED, 'x')", len: 2},
		{name: "dim none", entries: []any{None}, str: "P(None,)", len: 1},
		// §3: nested tuples are rejected (jaxlib 0.7.2+).
		{name: "nested tuple", entries: []any{[]any{"x", []string{"y"}}},
			err: "mesh: invalid partition spec: entry 0: a tuple inside PartitionSpec cannot contain []string (nested tuples are not allowed)"},
		{name: "bad type", entries: []any{"x", 3},
			err: "mesh: invalid partition spec: entry 1 has unsupported type int, want nil, string, []string or Dim"},
		{name: "empty name in tuple", entries: []any{Axes("x", "")},
			err: "mesh: invalid partition spec: entry 0: empty axis name at tuple position 1 of ('x', '')"},
		{name: "quote escaping", entries: []any{"it's"}, str: `P('it\'s',)`, len: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := P(tc.entries...)
			if wantErr(t, s.Err(), tc.err) {
				if !errors.Is(s.Err(), ErrInvalidSpec) {
					t.Errorf("error does not wrap ErrInvalidSpec")
				}
				return
			}
			if s.String() != tc.str || s.Len() != tc.len {
				t.Errorf("got %s (len %d), want %s (len %d)", s, s.Len(), tc.str, tc.len)
			}
		})
	}
}

func TestSpecCanonical(t *testing.T) {
	// jax_semantics.md §3: P((), 'x') is P(None, 'x').
	if !P([]string{}, "x").Equal(P(nil, "x")) {
		t.Errorf("P((), 'x') != P(None, 'x')")
	}
	if !P([]string{"x"}).Equal(P("x")) {
		t.Errorf("P(('x',)) != P('x')")
	}
	// A shorter spec is a different spec (tuple equality), but the same
	// geometry.
	if P("x").Equal(P("x", nil)) {
		t.Errorf("P('x') == P('x', None)")
	}
	if P("x", "y").Equal(P("y", "x")) {
		t.Errorf("order ignored")
	}
	s := P("x", Axes("a", "b"))
	if s.Dim(5) != None || s.Dim(-1) != None {
		t.Errorf("out-of-range Dim not None")
	}
	if got := s.Dim(1).Axes(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Dim(1).Axes() = %v", got)
	}
	if !s.Dim(2).IsReplicated() || s.Dim(0).IsReplicated() || !Unconstrained.IsUnconstrained() {
		t.Errorf("predicates wrong")
	}
	if Axes("x") != s.Dim(0) {
		t.Errorf("Dim not comparable by value")
	}
	if got := s.UsedAxes(); !slices.Equal(got, []string{"x", "a", "b"}) {
		t.Errorf("UsedAxes = %v", got)
	}
	if _, err := NewSpec("x", 1.5); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("NewSpec err = %v", err)
	}
	dims := s.Dims()
	dims[0] = None
	if s.Dim(0) == None {
		t.Errorf("spec mutated through Dims")
	}
	if !SpecOf(Axes("x"), None).Equal(P("x", nil)) {
		t.Errorf("SpecOf differs from P")
	}
}
