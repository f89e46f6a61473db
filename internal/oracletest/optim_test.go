package oracletest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// The optim group: package optim against optax (tools/oracle/optim.py writes
// testdata/oracle/optim.json).

// optimTol is the relative tolerance of the optim comparisons: every case is float32
// elementwise arithmetic in optax's order of operations, so only the CPU kernels of sqrt, cos
// and pow may differ by an ulp between XLA versions; optimFloor is the absolute floor near
// zero. On the default plugin every value is bit-equal to optax's (checked with both set to
// 0), because the golden jits the same step Go compiles: update and apply_updates in one
// function.
const optimTol, optimFloor = 1e-6, 1e-9

// optimGPUTolerance is the (relative, absolute) tolerance of a case of type dt on a GPU, where
// XLA's kernels differ from the CPU's in the last bits (gpu_test.go) and a few steps compound
// that: float32 as gpuTolerance; a bfloat16 case 5e-2, where a bfloat16 step that rounds the
// other way moves the float32 state after it by more than a bfloat16 unit (on an H200,
// adafactor_momentum_bf16's factored second moments came within 1.5e-2 of optax's).
func optimGPUTolerance(dt dtypes.DType) (rtol, atol float64) {
	if dt == dtypes.BFloat16 {
		return 5e-2, 1e-6
	}
	return gpuTolerance(dtypes.Float32)
}

type optimCase struct {
	Name  string       `json:"name"`
	DType string       `json:"dtype"`
	Steps [][]vjpArray `json:"steps"`
	State []vjpArray   `json:"state"`
}

type optimSchedule struct {
	Name   string   `json:"name"`
	Values vjpArray `json:"values"`
}

type optimGolden struct {
	Group        string          `json:"group"`
	OptaxVersion string          `json:"optax_version"`
	Steps        int             `json:"steps"`
	Optimizers   []optimCase     `json:"optimizers"`
	Schedules    []optimSchedule `json:"schedules"`
}

func loadOptim(t *testing.T) optimGolden {
	t.Helper()
	g := readGolden[optimGolden](t, "optim")
	if g.Group != "optim" || len(g.Optimizers) == 0 || len(g.Schedules) == 0 || g.Steps == 0 {
		t.Fatalf("oracle golden optim: malformed")
	}
	return g
}

// optimShapes are tools/oracle/optim.py's SHAPES: the parameters' dimensions.
var optimShapes = [][]int{{4, 3}, {5}, {}}

// optimParams and optimGrads are optim.py's params() and grads(step).
func optimParams() [][]float32 {
	out := make([][]float32, len(optimShapes))
	for k, d := range optimShapes {
		out[k] = pattern(d, k, 8, 0)
	}
	return out
}

func optimGrads(step int) [][]float32 {
	out := make([][]float32, len(optimShapes))
	for k, d := range optimShapes {
		out[k] = pattern(d, 5*k+step+1, 8, 0)
	}
	return out
}

func mustSchedule(s optim.Schedule, err error) optim.Schedule {
	if err != nil {
		panic(err)
	}
	return s
}

// optimWarmupCosine and optimLinear are optim.py's warmup_cosine() and linear().
func optimWarmupCosine() optim.Schedule {
	return mustSchedule(optim.WarmupCosineDecay(0, 0.01, 2, 5, 0.001))
}

func optimLinear() optim.Schedule { return mustSchedule(optim.Linear(0.1, 0.01, 3, 1)) }

func chainOf(ts ...func() (optim.Transformation, error)) (optim.Transformation, error) {
	var out []optim.Transformation
	for _, mk := range ts {
		t, err := mk()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return optim.Chain(out...), nil
}

// optimCases builds, per golden case, the optimizer optax ran, with package optim.
var optimCases = map[string]func() (optim.Transformation, error){
	"sgd":                 func() (optim.Transformation, error) { return optim.SGD(optim.Constant(0.1), 0, false) },
	"sgd_momentum":        func() (optim.Transformation, error) { return optim.SGD(optim.Constant(0.1), 0.9, false) },
	"sgd_nesterov":        func() (optim.Transformation, error) { return optim.SGD(optim.Constant(0.1), 0.9, true) },
	"sgd_linear_schedule": func() (optim.Transformation, error) { return optim.SGD(optimLinear(), 0.5, false) },
	"adam":                func() (optim.Transformation, error) { return optim.Adam(optim.Constant(0.01), optim.AdamDefaults()) },
	"adam_eps_root": func() (optim.Transformation, error) {
		return optim.Adam(optim.Constant(0.01), optim.AdamParams{B1: 0.8, B2: 0.99, Eps: 1e-3, EpsRoot: 1e-4})
	},
	"adam_nesterov": func() (optim.Transformation, error) {
		p := optim.AdamDefaults()
		p.Nesterov = true
		return optim.Adam(optim.Constant(0.01), p)
	},
	"adam_warmup_cosine": func() (optim.Transformation, error) { return optim.Adam(optimWarmupCosine(), optim.AdamDefaults()) },
	"adamw": func() (optim.Transformation, error) {
		return optim.AdamW(optim.Constant(0.01), optim.AdamDefaults(), 0.1, nil)
	},
	"adamw_default_decay": func() (optim.Transformation, error) {
		return optim.AdamW(optim.Constant(0.01), optim.AdamDefaults(), 1e-4, nil)
	},
	"lion":          func() (optim.Transformation, error) { return optim.Lion(optim.Constant(0.001), 0.9, 0.99, 1e-3, nil) },
	"lion_no_decay": func() (optim.Transformation, error) { return optim.Lion(optim.Constant(0.003), 0.8, 0.95, 0, nil) },
	"clip_adam": func() (optim.Transformation, error) {
		return chainOf(func() (optim.Transformation, error) { return optim.ClipByGlobalNorm(1) },
			func() (optim.Transformation, error) { return optim.Adam(optim.Constant(0.01), optim.AdamDefaults()) })
	},
	"clip_sgd_untriggered": func() (optim.Transformation, error) {
		return chainOf(func() (optim.Transformation, error) { return optim.ClipByGlobalNorm(100) },
			func() (optim.Transformation, error) { return optim.SGD(optim.Constant(0.1), 0, false) })
	},
	"clip_adamw_schedule": clipAdamWSchedule,
	"adamw_mask": func() (optim.Transformation, error) {
		return optim.AdamW(optim.Constant(0.01), optim.AdamDefaults(), 0.1, []bool{true, false, true})
	},
	"lion_mask": func() (optim.Transformation, error) {
		return optim.Lion(optim.Constant(0.001), 0.9, 0.99, 1e-3, []bool{false, true, true})
	},
	"adafactor": func() (optim.Transformation, error) {
		return optim.Adafactor(optim.Constant(0.01), optim.AdafactorDefaults())
	},
	"adafactor_factored": adafactorCase(optim.Constant(0.01), func(p *optim.AdafactorParams) { p.MinDimSizeToFactor = 3 }),
	"adafactor_momentum": adafactorMomentum,
	"adafactor_weight_decay": adafactorCase(optim.Constant(0.01), func(p *optim.AdafactorParams) {
		p.MinDimSizeToFactor = 3
		p.WeightDecayRate = 0.1
		p.WeightDecayMask = []bool{true, true, false}
	}),
	"adafactor_plain_schedule": adafactorCase(optimLinear(), func(p *optim.AdafactorParams) {
		p.MinDimSizeToFactor = 3
		p.DecayRate = 0.5
		p.DecayOffset = -2
		p.MultiplyByParameterScale = false
		p.ClippingThreshold = 0
		p.Eps = 1e-3
	}),
	"adafactor_unfactored_clip": adafactorCase(optim.Constant(0.05), func(p *optim.AdafactorParams) {
		p.MinDimSizeToFactor = 3
		p.Factored = false
		p.ClippingThreshold = 0.5
	}),
	"adafactor_momentum_bf16":  adafactorMomentum,
	"sgd_nesterov_bf16":        func() (optim.Transformation, error) { return optim.SGD(optim.Constant(0.1), 0.9, true) },
	"lion_bf16":                func() (optim.Transformation, error) { return optim.Lion(optim.Constant(0.001), 0.9, 0.99, 1e-3, nil) },
	"clip_adamw_schedule_bf16": clipAdamWSchedule,
}

// adafactorCase builds optax.adafactor(lr, ...) with the defaults that edit changes.
func adafactorCase(lr optim.Schedule, edit func(p *optim.AdafactorParams)) func() (optim.Transformation, error) {
	return func() (optim.Transformation, error) {
		p := optim.AdafactorDefaults()
		edit(&p)
		return optim.Adafactor(lr, p)
	}
}

var adafactorMomentum = adafactorCase(optim.Constant(0.01), func(p *optim.AdafactorParams) {
	p.MinDimSizeToFactor = 2
	p.Momentum = 0.9
})

func clipAdamWSchedule() (optim.Transformation, error) {
	return chainOf(func() (optim.Transformation, error) { return optim.ClipByGlobalNorm(0.5) },
		func() (optim.Transformation, error) {
			return optim.AdamW(optimWarmupCosine(), optim.AdamDefaults(), 0.05, nil)
		})
}

// optimSchedules builds, per golden schedule, the schedule optax evaluated.
var optimSchedules = map[string]func() (optim.Schedule, error){
	"constant":              func() (optim.Schedule, error) { return optim.Constant(0.25), nil },
	"linear":                func() (optim.Schedule, error) { return optimLinear(), nil },
	"linear_increasing":     func() (optim.Schedule, error) { return optim.Linear(0, 1, 4, 0) },
	"cosine_decay":          func() (optim.Schedule, error) { return optim.CosineDecay(0.1, 5, 0.1, 1) },
	"cosine_decay_exponent": func() (optim.Schedule, error) { return optim.CosineDecay(0.1, 6, 0, 2) },
	"warmup_cosine_decay":   func() (optim.Schedule, error) { return optimWarmupCosine(), nil },
	"warmup_cosine_decay_no_warmup": func() (optim.Schedule, error) {
		return optim.WarmupCosineDecay(0, 0.02, 0, 4, 0.002)
	},
}

// compareOptim appends the differences between optax's want and xlamesh's buffer: the type
// and shape, then the values, int32 ones exactly and float32 and bfloat16 ones within
// optimTol (on a GPU within optimGPUTolerance of the case's type dt).
func compareOptim(d *[]string, what string, want vjpArray, got *pjrt.Buffer, dt dtypes.DType) error {
	s := got.Shape()
	if wd, ok := programDTypes[want.DType]; !ok || s.DType() != wd || !slices.Equal(s.Dims(), want.Shape) {
		*d = append(*d, fmt.Sprintf("%s: optax %s%v, xlamesh %v%v", what, want.DType, want.Shape, s.DType(), s.Dims()))
		return nil
	}
	h, err := got.ToHost()
	if err != nil {
		return err
	}
	var vals []float64
	switch h := h.(type) {
	case []float32:
		for _, v := range h {
			vals = append(vals, float64(v))
		}
	case []int32:
		for _, v := range h {
			vals = append(vals, float64(v))
		}
	case []uint16: // bfloat16 bits, the high half of a float32's
		if s.DType() != dtypes.BFloat16 {
			return fmt.Errorf("%s: host data %T of %v", what, h, s.DType())
		}
		for _, v := range h {
			vals = append(vals, float64(math.Float32frombits(uint32(v)<<16)))
		}
	default:
		return fmt.Errorf("%s: host data %T", what, h)
	}
	if len(vals) != len(want.Values) {
		*d = append(*d, fmt.Sprintf("%s: optax has %d values, xlamesh %d", what, len(want.Values), len(vals)))
		return nil
	}
	for i, w := range want.Values {
		g := vals[i]
		if s.DType() == dtypes.Float32 {
			w = float64(float32(w))
		}
		tol, floor := optimTol, optimFloor
		if onGPU() {
			tol, floor = optimGPUTolerance(dt)
		}
		if math.Abs(g-w) > floor+tol*math.Max(math.Abs(g), math.Abs(w)) {
			*d = append(*d, fmt.Sprintf("%s[%d]: optax %v, xlamesh %v", what, i, w, g))
			return nil
		}
	}
	return nil
}

// optimRun compiles f's module for one device, runs it on args and returns its results.
func optimRun(c *pjrt.Client, dev *pjrt.Device, m *stablehlo.Module, args []*pjrt.Buffer) ([]*pjrt.Buffer, error) {
	text, err := m.Build()
	if err != nil {
		return nil, err
	}
	exe, err := c.Compile(text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	out, err := exe.Execute([][]*pjrt.Buffer{args})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func closeBuffers(bs []*pjrt.Buffer) {
	for _, b := range bs {
		if b != nil {
			b.Close()
		}
	}
}

// TestOptimOptimizers runs each optimizer of tools/oracle/optim.py with package optim on
// the CPU plugin, one compiled step called g.Steps times, and compares the parameters after
// every step and the final state's leaves with optax.
func TestOptimOptimizers(t *testing.T) {
	g := loadOptim(t)
	report.noteGroup("optim", fmt.Sprintf("Package `optim` against optax %s (tools/oracle/optim.py): each optimizer's parameters "+
		"after each of %d steps and its final state leaves, with float32 and bfloat16 parameters, and the schedules at counts 0..9. "+
		"Counts compare exactly, floats within %g relative; on the pinned CPU plugin every value is bit-equal to optax's.",
		g.OptaxVersion, g.Steps, optimTol))
	c := pjrttest.Client(t)
	dev := c.Devices()[0]
	for _, tc := range g.Optimizers {
		t.Run(tc.Name, func(t *testing.T) {
			mk, ok := optimCases[tc.Name]
			if !ok {
				t.Errorf("optim/%s: no builder in optimCases", tc.Name)
				return
			}
			opt, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			d, err := runOptim(c, dev, opt, tc, g.Steps)
			if err != nil {
				t.Fatal(err)
			}
			report.check(t, "optim", tc.Name, d)
		})
	}
	for name := range optimCases {
		if !slices.ContainsFunc(g.Optimizers, func(c optimCase) bool { return c.Name == name }) {
			t.Errorf("optim/%s: in optimCases but not in the golden", name)
		}
	}
}

func runOptim(c *pjrt.Client, dev *pjrt.Device, opt optim.Transformation, tc optimCase, steps int) ([]string, error) {
	n := len(optimShapes)
	dt, ok := programDTypes[tc.DType]
	if !ok {
		return nil, fmt.Errorf("dtype %q", tc.DType)
	}
	var d []string
	var paramShapes []shapes.Shape
	for _, s := range optimShapes {
		paramShapes = append(paramShapes, shapes.Make(dt, s...))
	}
	layout := opt.Layout(paramShapes)
	if len(layout) != len(tc.State) {
		return []string{fmt.Sprintf("state: optax has %d leaves, optim's Layout %d", len(tc.State), len(layout))}, nil
	}
	for k, l := range layout {
		if want := l.Shape.Dims(); !slices.Equal(tc.State[k].Shape, want) {
			d = append(d, fmt.Sprintf("state leaf %d: optax shape %v, Layout says %v (%s)", k, tc.State[k].Shape, want, l))
		}
	}
	var live []*pjrt.Buffer
	defer func() { closeBuffers(live) }()
	put := func(v []float32, dims []int) (*pjrt.Buffer, error) {
		b, err := c.BufferFromHost(dev, v, dims)
		if err == nil {
			live = append(live, b)
		}
		return b, err
	}
	f32Args := func(f *stablehlo.Function) []stablehlo.Value {
		var vs []stablehlo.Value
		for _, s := range optimShapes {
			vs = append(vs, f.Arg(stablehlo.NewShape(dtypes.Float32, s...)))
		}
		return vs
	}
	// toDType converts float32 inputs (pattern values, exact in every type the golden has) to
	// the case's type.
	toDType := func(f *stablehlo.Function, vs []stablehlo.Value) []stablehlo.Value {
		out := make([]stablehlo.Value, len(vs))
		for i, v := range vs {
			out[i] = v
			if dt != dtypes.Float32 {
				out[i] = f.Convert(v, dt)
			}
		}
		return out
	}
	var f32Params []*pjrt.Buffer
	for k, v := range optimParams() {
		b, err := put(v, optimShapes[k])
		if err != nil {
			return nil, err
		}
		f32Params = append(f32Params, b)
	}
	// The initial parameters in the case's type, then Init's state.
	mi := stablehlo.NewModule("optim_init")
	fi := mi.Main()
	pv := toDType(fi, f32Args(fi))
	fi.Return(append(slices.Clone(pv), opt.Init(fi, pv)...)...)
	out, err := optimRun(c, dev, mi, f32Params)
	live = append(live, out...)
	if err != nil {
		return nil, err
	}
	params, state := out[:n], out[n:]
	// One step: parameters, float32 gradients and state in; new parameters and state out.
	// They are read as they are: XLA drops a float32 -> bfloat16 -> float32 round trip, so a
	// float32 copy of a bfloat16 result would show unrounded values.
	ms := stablehlo.NewModule("optim_step")
	f := ms.Main()
	var p []stablehlo.Value
	for _, b := range params {
		p = append(p, f.Arg(b.Shape()))
	}
	gr := f32Args(f)
	var st optim.State
	for _, b := range state {
		st = append(st, f.Arg(b.Shape()))
	}
	u, next := opt.Update(f, toDType(f, gr), st, p)
	f.Return(append(optim.ApplyUpdates(f, p, u), next...)...)
	text, err := ms.Build()
	if err != nil {
		return nil, err
	}
	exe, err := c.Compile(text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	for s := range steps {
		args := slices.Clone(params)
		for k, v := range optimGrads(s) {
			b, err := put(v, optimShapes[k])
			if err != nil {
				return nil, err
			}
			args = append(args, b)
		}
		r, err := exe.Execute([][]*pjrt.Buffer{append(args, state...)})
		if err != nil {
			return nil, err
		}
		live = append(live, r[0]...)
		params, state = r[0][:n], r[0][n:]
		for k, b := range params {
			if err := compareOptim(&d, fmt.Sprintf("step %d param %d", s+1, k), tc.Steps[s][k], b, dt); err != nil {
				return nil, err
			}
		}
	}
	for k, b := range state {
		if err := compareOptim(&d, fmt.Sprintf("state leaf %d", k), tc.State[k], b, dt); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// TestOptimSchedules evaluates each schedule of tools/oracle/optim.py at the int32 counts
// optax evaluated it at and compares.
func TestOptimSchedules(t *testing.T) {
	g := loadOptim(t)
	c := pjrttest.Client(t)
	dev := c.Devices()[0]
	for _, tc := range g.Schedules {
		t.Run(tc.Name, func(t *testing.T) {
			mk, ok := optimSchedules[tc.Name]
			if !ok {
				t.Errorf("optim/schedule/%s: no builder in optimSchedules", tc.Name)
				return
			}
			s, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			m := stablehlo.NewModule("schedule")
			f := m.Main()
			// The counts are arguments, not constants, so that XLA does not fold the schedule.
			var vs []stablehlo.Value
			var counts []*pjrt.Buffer
			defer func() { closeBuffers(counts) }()
			var args []stablehlo.Value
			for range tc.Values.Values {
				args = append(args, f.Arg(stablehlo.NewShape(dtypes.Int32)))
			}
			for i, a := range args {
				vs = append(vs, s.At(f, a))
				b, err := c.BufferFromHost(dev, []int32{int32(i)}, []int{})
				if err != nil {
					t.Fatal(err)
				}
				counts = append(counts, b)
			}
			f.Return(f.Concatenate(0, reshape1(f, vs)...))
			out, err := optimRun(c, dev, m, counts)
			if err != nil {
				t.Fatal(err)
			}
			defer closeBuffers(out)
			var d []string
			if err := compareOptim(&d, "values", tc.Values, out[0], dtypes.Float32); err != nil {
				t.Fatal(err)
			}
			report.check(t, "optim", "schedule/"+tc.Name, d)
		})
	}
}

func reshape1(f *stablehlo.Function, vs []stablehlo.Value) []stablehlo.Value {
	out := make([]stablehlo.Value, len(vs))
	for i, v := range vs {
		out[i] = f.Reshape(v, 1)
	}
	return out
}
