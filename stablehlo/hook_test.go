package stablehlo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// An op hook sees every op as it is added (constants included), and what it returns stands
// for the op's results: here each negate is followed by a my.note, whose result the caller
// gets; ops the hook adds do not call it again.
func TestOpHook(t *testing.T) {
	m := stablehlo.NewModule("f")
	m.SetContext(noteKey{}, "after")
	var seen []string
	m.SetOpHook(func(f *stablehlo.Function, o *stablehlo.Op) []stablehlo.Value {
		seen = append(seen, o.Name())
		if o.Name() != "stablehlo.negate" {
			return nil
		}
		return []stablehlo.Value{note(f, o.Results()[0])}
	})
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
	n := f.Neg(x)
	f.Return(f.Add(n, f.Constant(float32(1))))
	text, err := m.Build()
	require.NoError(t, err)
	assert.Equal(t, []string{"stablehlo.negate", "stablehlo.constant", "stablehlo.broadcast_in_dim", "stablehlo.add"}, seen)
	assert.Contains(t, text, `%1 = my.note %0 after : tensor<4xf32>`)
	assert.Contains(t, text, `"stablehlo.add"(%1, %3)`)
}

func TestOpHookErrors(t *testing.T) {
	t.Run("hook fails", func(t *testing.T) {
		m := stablehlo.NewModule("f")
		m.SetOpHook(func(f *stablehlo.Function, o *stablehlo.Op) []stablehlo.Value {
			f.Failf("hooked", 0, o.Results()[0], errNote, "refused")
			return nil
		})
		f := m.Main()
		v := f.Neg(f.Arg(stablehlo.NewShape(dtypes.Float32, 4)))
		assert.False(t, v.Valid(), "a failed hook leaves the caller a zero Value")
		require.ErrorIs(t, m.Err(), errNote)
	})
	t.Run("wrong count", func(t *testing.T) {
		m := stablehlo.NewModule("f")
		m.SetOpHook(func(f *stablehlo.Function, o *stablehlo.Op) []stablehlo.Value {
			return []stablehlo.Value{o.Results()[0], o.Results()[0]}
		})
		f := m.Main()
		f.Neg(f.Arg(stablehlo.NewShape(dtypes.Float32, 4)))
		require.ErrorIs(t, m.Err(), stablehlo.ErrFunction)
		assert.Contains(t, m.Err().Error(), "the op hook returned 2 values for 1 results")
	})
}

// MoveToEnd lets a hook give an op operands computed after it: the op moves behind them.
func TestMoveToEnd(t *testing.T) {
	m := stablehlo.NewModule("f")
	m.SetContext(noteKey{}, "first")
	m.SetOpHook(func(f *stablehlo.Function, o *stablehlo.Op) []stablehlo.Value {
		if o.Name() != "stablehlo.add" {
			return nil
		}
		ops := o.Operands()
		ops[1] = note(f, ops[1])
		f.MoveToEnd(o, ops)
		return nil
	})
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
	f.Return(f.Add(x, x))
	text, err := m.Build()
	require.NoError(t, err)
	i, j := strings.Index(text, "my.note"), strings.Index(text, "stablehlo.add")
	require.True(t, i >= 0 && j > i, "the add follows its new operand:\n%s", text)
	assert.Contains(t, text, `"stablehlo.add"(%arg0, %0)`)

	for _, tc := range []struct {
		name string
		move func(f *stablehlo.Function, o *stablehlo.Op, y stablehlo.Value)
		want error
	}{
		{"operand count", func(f *stablehlo.Function, o *stablehlo.Op, _ stablehlo.Value) { f.MoveToEnd(o, o.Operands()[:1]) }, stablehlo.ErrFunction},
		{"operand shape", func(f *stablehlo.Function, o *stablehlo.Op, y stablehlo.Value) {
			f.MoveToEnd(o, []stablehlo.Value{o.Operands()[0], y})
		}, stablehlo.ErrShape},
		{"another function's op", func(f *stablehlo.Function, o *stablehlo.Op, _ stablehlo.Value) {
			f.Module().Func("g").MoveToEnd(o, o.Operands())
		}, stablehlo.ErrFunction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("f")
			f := m.Main()
			x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
			y := f.Arg(stablehlo.NewShape(dtypes.Float32, 2))
			f.Add(x, x)
			tc.move(f, f.Ops()[0], y)
			require.True(t, errors.Is(m.Err(), tc.want), "%v", m.Err())
		})
	}
}
