// Package gradcheck checks the gradients package autodiff builds against central finite
// differences, computed by running the same program on a PJRT device: the test of a
// transpose rule, or of a model's loss, that needs no other oracle.
//
// Keep the shapes small (each element of each differentiated input costs two runs) and the
// inputs in float64, away from points where the function is not differentiable (ties of max,
// abs at 0):
//
//	err := gradcheck.Check(client, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
//		return f.Tanh(f.MatMul(a[0], a[1]))
//	}, gradcheck.F64([]float64{...}, 2, 3), gradcheck.F64([]float64{...}, 3, 2))
//
// A non-scalar output is projected on a fixed cotangent (sum(out * ct)), so Check tests VJP
// with that cotangent. CheckJVP tests autodiff.JVP in a fixed direction the same way.
package gradcheck

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// ErrMismatch: an autodiff gradient differs from finite differences by more than the
// tolerance. Check's error wraps it and lists the differing elements.
var ErrMismatch = errors.New("gradient differs from finite differences")

// Func builds the checked computation from the function's arguments (one per Input).
type Func func(f *stablehlo.Function, args []stablehlo.Value) stablehlo.Value

// Input is one argument: its shape and row-major data, a []float64 for a float64 argument,
// which is differentiated, or a slice of another type (integer indices, say), passed as it
// is and not differentiated.
type Input struct {
	Shape stablehlo.Shape
	Data  any
}

// F64 returns a differentiated float64 input of the given dimensions.
func F64(data []float64, dims ...int) Input {
	return Input{Shape: stablehlo.NewShape(dtypes.Float64, dims...), Data: data}
}

// Option configures Check.
type Option func(*config)

type config struct {
	eps, rtol, atol float64
}

// setup applies opts to the defaults and returns the client's first device, which runs
// every check.
func setup(c *pjrt.Client, opts []Option) (config, *pjrt.Device, error) {
	cfg := config{eps: 1e-6, rtol: 1e-6, atol: 1e-6}
	for _, o := range opts {
		o(&cfg)
	}
	if c == nil || len(c.Devices()) == 0 {
		return cfg, nil, errors.New("gradcheck: no client or no device")
	}
	return cfg, c.Devices()[0], nil
}

// off reports whether the autodiff value got and the finite difference num differ by more
// than the tolerance: a NaN gradient is always off, and an infinite one is off unless the
// finite difference is the same infinity (the tolerance, infinite then, would accept any).
func (c config) off(got, num float64) bool {
	if got == num {
		return false
	}
	d := math.Abs(got - num)
	return !(d <= c.atol+c.rtol*math.Max(math.Abs(got), math.Abs(num))) || math.IsInf(d, 0)
}

// Eps sets the finite-difference step (default 1e-6).
func Eps(e float64) Option { return func(c *config) { c.eps = e } }

// Tolerance sets the allowed difference |autodiff - numeric| <= atol + rtol*max(|autodiff|,
// |numeric|) (defaults 1e-6 and 1e-6).
func Tolerance(rtol, atol float64) Option { return func(c *config) { c.rtol, c.atol = rtol, atol } }

// Check builds fn on the inputs' types, differentiates it with autodiff (Grad of the output,
// projected on a fixed cotangent when it is not a scalar), runs it on the client's first
// device, and compares every gradient element of every float64 input with central finite
// differences. It returns nil when all agree, an error wrapping ErrMismatch listing the
// elements that do not, or the build, compile or run error.
func Check(c *pjrt.Client, fn Func, inputs []Input, opts ...Option) error {
	cfg, dev, err := setup(c, opts)
	if err != nil {
		return err
	}
	var diff []int // positions of the differentiated inputs
	for i, in := range inputs {
		if in.Shape.DType() == dtypes.Float64 {
			if d, ok := in.Data.([]float64); !ok || len(d) != in.Shape.Size() {
				return fmt.Errorf("gradcheck: input %d: want %d float64 values for %v", i, in.Shape.Size(), in.Shape)
			}
			diff = append(diff, i)
		}
	}
	gradText, err := build(fn, inputs, diff, true)
	if err != nil {
		return err
	}
	lossText, err := build(fn, inputs, diff, false)
	if err != nil {
		return err
	}
	gradExe, err := c.Compile(gradText, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	if err != nil {
		return fmt.Errorf("gradcheck: %w", err)
	}
	defer gradExe.Close()
	lossExe, err := c.Compile(lossText, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	if err != nil {
		return fmt.Errorf("gradcheck: %w", err)
	}
	defer lossExe.Close()

	outs, err := execute(c, dev, gradExe, inputs)
	if err != nil {
		return err
	}
	var bad []string
	for k, i := range diff {
		got := outs[1+k].([]float64)
		x := inputs[i].Data.([]float64)
		for e := range x {
			orig := x[e]
			x[e] = orig + cfg.eps
			hi, err := execute(c, dev, lossExe, inputs)
			if err != nil {
				x[e] = orig
				return err
			}
			x[e] = orig - cfg.eps
			lo, err := execute(c, dev, lossExe, inputs)
			x[e] = orig
			if err != nil {
				return err
			}
			num := (hi[0].([]float64)[0] - lo[0].([]float64)[0]) / (2 * cfg.eps)
			if cfg.off(got[e], num) {
				bad = append(bad, fmt.Sprintf("input %d element %d: autodiff %.10g, finite differences %.10g", i, e, got[e], num))
			}
		}
	}
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("... and %d more", len(bad)-10))
		}
		return fmt.Errorf("gradcheck: %w:\n%s", ErrMismatch, strings.Join(bad, "\n"))
	}
	return nil
}

// build returns the module computing the projected output and, with grads, the gradients
// with respect to the inputs at positions diff.
func build(fn Func, inputs []Input, diff []int, grads bool) (string, error) {
	m := stablehlo.NewModule("gradcheck")
	f := m.Main()
	args := make([]stablehlo.Value, len(inputs))
	for i, in := range inputs {
		args[i] = f.Arg(in.Shape)
	}
	out := fn(f, args)
	loss := project(f, out)
	if !grads {
		f.Return(loss)
	} else {
		wrt := make([]stablehlo.Value, len(diff))
		for k, i := range diff {
			wrt[k] = args[i]
		}
		g := autodiff.Grad(f, loss, wrt...)
		f.Return(append([]stablehlo.Value{loss}, g...)...)
	}
	text, err := m.Build()
	if err != nil {
		return "", fmt.Errorf("gradcheck: %w", err)
	}
	return text, nil
}

// project returns sum(out * ct) in float64 for a fixed ct of out's shape (out itself,
// converted, for a scalar).
func project(f *stablehlo.Function, out stablehlo.Value) stablehlo.Value {
	if !out.Valid() {
		return out
	}
	x := out
	if x.DType() != dtypes.Float64 {
		x = f.Convert(x, dtypes.Float64)
	}
	if x.Shape().Rank() == 0 {
		return x
	}
	ct := Cotangent(x.Shape().Size())
	return f.Sum(f.Mul(x, f.Array(ct, x.Shape().Dims()...)))
}

// CheckJVP is Check for autodiff.JVP: it builds the tangent of fn's output in a fixed
// direction (Cotangent's values for each float64 input) and compares each of its elements
// with the central finite difference of the output along that direction.
func CheckJVP(c *pjrt.Client, fn Func, inputs []Input, opts ...Option) error {
	cfg, dev, err := setup(c, opts)
	if err != nil {
		return err
	}
	dirs := make([][]float64, len(inputs))
	for i, in := range inputs {
		if in.Shape.DType() == dtypes.Float64 {
			if d, ok := in.Data.([]float64); !ok || len(d) != in.Shape.Size() {
				return fmt.Errorf("gradcheck: input %d: want %d float64 values for %v", i, in.Shape.Size(), in.Shape)
			}
			dirs[i] = Cotangent(in.Shape.Size() + i)[i:]
		}
	}
	build := func(jvp bool) (string, error) {
		m := stablehlo.NewModule("gradcheck")
		f := m.Main()
		args := make([]stablehlo.Value, len(inputs))
		for i, in := range inputs {
			args[i] = f.Arg(in.Shape)
		}
		out := fn(f, args)
		if out.Valid() && out.DType() != dtypes.Float64 {
			out = f.Convert(out, dtypes.Float64)
		}
		if !jvp {
			f.Return(out)
		} else {
			var wrt, ts []stablehlo.Value
			for i, a := range args {
				if dirs[i] != nil {
					wrt = append(wrt, a)
					ts = append(ts, f.Array(dirs[i], a.Shape().Dims()...))
				}
			}
			f.Return(autodiff.JVP(f, []stablehlo.Value{out}, wrt, ts)...)
		}
		text, err := m.Build()
		if err != nil {
			return "", fmt.Errorf("gradcheck: %w", err)
		}
		return text, nil
	}
	opt := pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}}
	var exes [2]*pjrt.Executable
	for k, jvp := range []bool{true, false} {
		text, err := build(jvp)
		if err != nil {
			return err
		}
		if exes[k], err = c.Compile(text, opt); err != nil {
			return fmt.Errorf("gradcheck: %w", err)
		}
		defer exes[k].Close()
	}
	got, err := execute(c, dev, exes[0], inputs)
	if err != nil {
		return err
	}
	shift := func(sign float64) ([]float64, error) {
		moved := make([]Input, len(inputs))
		for i, in := range inputs {
			moved[i] = in
			if dirs[i] != nil {
				x := in.Data.([]float64)
				y := make([]float64, len(x))
				for e := range x {
					y[e] = x[e] + sign*cfg.eps*dirs[i][e]
				}
				moved[i].Data = y
			}
		}
		out, err := execute(c, dev, exes[1], moved)
		if err != nil {
			return nil, err
		}
		return out[0].([]float64), nil
	}
	hi, err := shift(1)
	if err != nil {
		return err
	}
	lo, err := shift(-1)
	if err != nil {
		return err
	}
	tan := got[0].([]float64)
	var bad []string
	for e := range tan {
		num := (hi[e] - lo[e]) / (2 * cfg.eps)
		if cfg.off(tan[e], num) {
			bad = append(bad, fmt.Sprintf("output element %d: autodiff.JVP %.10g, finite differences %.10g", e, tan[e], num))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("... and %d more", len(bad)-10))
		}
		return fmt.Errorf("gradcheck: %w:\n%s", ErrMismatch, strings.Join(bad, "\n"))
	}
	return nil
}

// Cotangent returns the fixed cotangent Check projects an output of n elements on: values in
// [-1, 1] that are multiples of 1/8, none zero, from a fixed sequence.
func Cotangent(n int) []float64 {
	out := make([]float64, n)
	s := uint32(12345)
	for i := range out {
		s = s*1103515245 + 12345
		v := int((s>>16)%16) - 8 // -8..7
		if v >= 0 {
			v++ // -8..-1, 1..8
		}
		out[i] = float64(v) / 8
	}
	return out
}

// execute runs exe on the inputs and returns its outputs as host slices.
func execute(c *pjrt.Client, dev *pjrt.Device, exe *pjrt.Executable, inputs []Input) ([]any, error) {
	args := make([]*pjrt.Buffer, len(inputs))
	defer func() {
		for _, b := range args {
			if b != nil {
				_ = b.Close()
			}
		}
	}()
	for i, in := range inputs {
		b, err := c.BufferFromHost(dev, in.Data, in.Shape.Dims())
		if err != nil {
			return nil, fmt.Errorf("gradcheck: input %d: %w", i, err)
		}
		args[i] = b
	}
	outs, err := exe.Execute([][]*pjrt.Buffer{args})
	if err != nil {
		return nil, fmt.Errorf("gradcheck: %w", err)
	}
	res := make([]any, len(outs[0]))
	var first error
	for i, b := range outs[0] {
		h, err := b.ToHost()
		_ = b.Close()
		if err != nil && first == nil {
			first = fmt.Errorf("gradcheck: %w", err)
		}
		res[i] = h
	}
	return res, first
}
