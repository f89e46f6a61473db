package optest

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Case is one test case: a @main of arguments Args whose result Build returns. Without Err
// the module builds, the result has shape Want and the text has an op named
// "stablehlo.<op>"; with Err the build fails with an *stablehlo.OpError for op, wrapping
// Sentinel, whose message contains Err, and the result is the zero Value.
type Case struct {
	Name     string
	Args     []stablehlo.Shape
	Build    func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value
	Want     stablehlo.Shape
	Sentinel error
	Err      string
}

// Run runs each case as a subtest; op is the StableHLO op (without "stablehlo.") that the
// cases emit or that their errors name.
func Run(t *testing.T, op string, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			var args []stablehlo.Value
			for _, s := range tc.Args {
				args = append(args, f.Arg(s))
			}
			r := tc.Build(f, args)
			f.Return(r)
			text, err := m.Build()
			if tc.Err == "" {
				require.NoError(t, err)
				require.True(t, tc.Want.Equal(r.Shape()), "got %v, want %v", r.Shape(), tc.Want)
				require.Contains(t, text, "stablehlo."+op)
				return
			}
			require.ErrorIs(t, err, tc.Sentinel)
			require.ErrorContains(t, err, tc.Err)
			var oe *stablehlo.OpError
			require.True(t, errors.As(err, &oe))
			require.Equal(t, op, oe.Op)
			require.False(t, r.Valid())
		})
	}
}

// Shape is stablehlo.NewShape, short for tables.
func Shape(d stablehlo.DType, dims ...int) stablehlo.Shape { return stablehlo.NewShape(d, dims...) }

// OpNames builds @main(x) = build(x) for an argument x of shape s and returns the names of
// the ops it records, in order, without their "stablehlo." or "chlo." prefix and joined by
// spaces: "constant reduce reshape ...".
func OpNames(t *testing.T, build func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value, s stablehlo.Shape) string {
	t.Helper()
	m := stablehlo.NewModule("m")
	f := m.Main()
	f.Return(build(f, f.Arg(s)))
	_, err := m.Build()
	require.NoError(t, err)
	var out []string
	for _, o := range f.Ops() {
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(o.Name(), "stablehlo."), "chlo."))
	}
	return strings.Join(out, " ")
}
