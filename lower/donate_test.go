package lower_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// donationMarks returns, per @main argument, "alias=N", "donor" or "-": what the text says of
// its donation.
func donationMarks(t *testing.T, text string) []string {
	t.Helper()
	start := strings.Index(text, "@main(")
	end := strings.Index(text[start:], ") ->")
	require.True(t, start >= 0 && end > 0, "no @main signature in\n%s", text)
	alias := regexp.MustCompile(`tf\.aliasing_output = (\d+) : i32`)
	var marks []string
	for _, a := range strings.Split(text[start:start+end], "%arg")[1:] {
		switch m := alias.FindStringSubmatch(a); {
		case m != nil:
			marks = append(marks, "alias="+m[1])
		case strings.Contains(a, "jax.buffer_donor = true"):
			marks = append(marks, "donor")
		default:
			marks = append(marks, "-")
		}
	}
	return marks
}

// TestDonationMarks: donated arguments are paired with results as jax.jit pairs them. The
// expected marks are what JAX 0.12.0.1 writes for the same functions (jax.jit(f,
// in_shardings, out_shardings, donate_argnums).lower(...).as_text()), on a 4x2 mesh
// ("x", "y") of 8 devices, or on one device.
func TestDonationMarks(t *testing.T) {
	m := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	sh := func(axes ...string) mesh.NamedSharding {
		dims := make([]mesh.Dim, len(axes))
		for i, a := range axes {
			dims[i] = mesh.Axes(a)
			if a == "" {
				dims[i] = mesh.None
			}
		}
		return mesh.MustNamedSharding(m, mesh.SpecOf(dims...))
	}
	x := lower.NewShape(dtypes.Float32, 8, 2)
	type body func(f *lower.Function, a, b lower.Value) []lower.Value
	tests := []struct {
		name     string
		in       []mesh.NamedSharding // nil: one device, no mesh
		out      []mesh.NamedSharding // nil: results unspecified
		donate   []int
		body     body
		expected []string
	}{
		{"shard shapes match", []mesh.NamedSharding{sh("x", "y"), sh("x")}, []mesh.NamedSharding{sh("x", "y"), sh("x", "y")}, []int{0, 1},
			func(f *lower.Function, a, b lower.Value) []lower.Value {
				return []lower.Value{f.Mul(a, f.Constant(2)), f.Add(b, f.Constant(1))}
			}, []string{"alias=0", "-"}},
		{"results unspecified", []mesh.NamedSharding{sh("x", "y"), sh("x")}, nil, []int{0, 1},
			func(f *lower.Function, a, b lower.Value) []lower.Value {
				return []lower.Value{f.Mul(a, f.Constant(2)), f.Add(b, f.Constant(1))}
			}, []string{"donor", "donor"}},
		{"first argument first", []mesh.NamedSharding{sh("x", "y"), sh("x", "y")}, []mesh.NamedSharding{sh("x", "y"), sh("x", "y")}, []int{0, 1},
			func(f *lower.Function, a, b lower.Value) []lower.Value {
				return []lower.Value{f.Mul(b, f.Constant(1)), f.Mul(a, f.Constant(1))}
			}, []string{"alias=0", "alias=1"}},
		{"element type", []mesh.NamedSharding{sh(), sh()}, []mesh.NamedSharding{sh(), sh()}, []int{0, 1},
			func(f *lower.Function, a, b lower.Value) []lower.Value {
				return []lower.Value{f.Convert(a, dtypes.Int32), f.Mul(b, f.Constant(1))}
			}, []string{"alias=1", "donor"}},
		{"element count", []mesh.NamedSharding{sh(), sh()}, []mesh.NamedSharding{sh(), sh()}, []int{0, 1},
			func(f *lower.Function, a, b lower.Value) []lower.Value {
				return []lower.Value{f.Reshape(f.Concatenate(0, a, a), 4, 8), f.Reshape(b, 2, 8)}
			}, []string{"donor", "-"}},
		{"not donated", []mesh.NamedSharding{sh("x", "y"), sh("x", "y")}, []mesh.NamedSharding{sh("x", "y"), sh("x", "y")}, []int{1},
			func(f *lower.Function, a, b lower.Value) []lower.Value {
				return []lower.Value{f.Mul(a, f.Constant(1)), f.Mul(b, f.Constant(1))}
			}, []string{"-", "alias=0"}},
		{"one device, same shape", nil, nil, []int{0},
			func(f *lower.Function, a, b lower.Value) []lower.Value { return []lower.Value{f.Mul(a, f.Constant(2))} },
			[]string{"alias=0", "-"}},
		{"one device, transposed", nil, nil, []int{0},
			func(f *lower.Function, a, b lower.Value) []lower.Value { return []lower.Value{f.Transpose(a, 1, 0)} },
			[]string{"donor", "-"}},
	}
	for _, p := range []lower.Partitioner{lower.Shardy, lower.GSPMD} {
		for _, tt := range tests {
			t.Run(p.String()+"/"+tt.name, func(t *testing.T) {
				mod := lower.NewModule("m", lower.WithPartitioner(p))
				f := mod.Main()
				var a, b lower.Value
				if tt.in == nil {
					a, b = f.Arg(x), f.Arg(x)
				} else {
					a, b = f.ShardedArg(x, tt.in[0]), f.ShardedArg(x, tt.in[1])
				}
				f.Return(tt.body(f, a, b)...)
				if tt.out != nil {
					f.ShardResults(tt.out...)
				}
				f.Donate(tt.donate...)
				prog, err := mod.Build()
				require.NoError(t, err)
				assert.Equal(t, tt.expected, donationMarks(t, prog.Text()))
			})
		}
	}
}

// TestDonationErrors: a donated index out of range, and donation outside @main, are build
// errors naming them.
func TestDonationErrors(t *testing.T) {
	mod := lower.NewModule("m")
	f := mod.Main()
	f.Return(f.Arg(lower.NewShape(dtypes.Float32, 2)))
	f.Donate(1)
	_, err := mod.Build()
	require.Error(t, err)
	assert.True(t, errors.Is(err, lower.ErrSharding), "%v", err)
	assert.Contains(t, err.Error(), "donated argument 1 out of range for 1 arguments")

	mod = lower.NewModule("m")
	g := mod.Func("g")
	g.Return(g.Arg(lower.NewShape(dtypes.Float32, 2)))
	g.Donate(0)
	_, err = mod.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "donation is for @main's arguments, not @g")
}
