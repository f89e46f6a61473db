package optim_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Compile-time checks that the constructors' results are Transformations and Schedules.
var (
	_ optim.Transformation = optim.Chain()
	_ optim.Schedule       = optim.Constant(1)
)

func TestHyperparameterErrors(t *testing.T) {
	lr := optim.Constant(0.1)
	tests := []struct {
		name string
		make func() error
		msg  string
	}{
		{"negative lr", func() error { _, err := optim.SGD(optim.Constant(-1), 0, false); return err }, "learning_rate = -1"},
		{"nan lr", func() error { _, err := optim.Adam(optim.Constant(math.NaN()), optim.AdamDefaults()); return err }, "learning_rate = NaN"},
		{"nil lr", func() error { _, err := optim.ScaleByLearningRate(nil); return err }, "nil learning rate"},
		{"momentum 1", func() error { _, err := optim.SGD(lr, 1, false); return err }, "momentum = 1 (want 0 <= momentum < 1)"},
		{"nesterov negative momentum", func() error { _, err := optim.SGD(lr, -0.5, true); return err }, "momentum = -0.5"},
		{"adam b1", func() error {
			_, err := optim.Adam(lr, optim.AdamParams{B1: 1.5, B2: 0.9, Eps: 1e-8})
			return err
		}, "b1 = 1.5"},
		{"adam b2", func() error {
			_, err := optim.Adam(lr, optim.AdamParams{B1: 0.9, B2: -0.1, Eps: 1e-8})
			return err
		}, "b2 = -0.1"},
		{"adam eps", func() error {
			_, err := optim.Adam(lr, optim.AdamParams{B1: 0.9, B2: 0.9, Eps: -1})
			return err
		}, "eps = -1"},
		{"adam eps_root", func() error {
			_, err := optim.Adam(lr, optim.AdamParams{B1: 0.9, B2: 0.9, EpsRoot: math.Inf(1)})
			return err
		}, "eps_root = +Inf"},
		{"adamw decay", func() error { _, err := optim.AdamW(lr, optim.AdamDefaults(), -1e-4, nil); return err }, "weight_decay = -0.0001"},
		{"lion b2", func() error { _, err := optim.Lion(lr, 0.9, 1, 0, nil); return err }, "b2 = 1"},
		{"clip zero", func() error { _, err := optim.ClipByGlobalNorm(0); return err }, "max_norm = 0 (want a finite value > 0)"},
		{"linear no steps", func() error { _, err := optim.Linear(1, 0, 0, 0); return err }, "steps = 0, begin = 0"},
		{"linear negative begin", func() error { _, err := optim.Linear(1, 0, 3, -1); return err }, "begin = -1"},
		{"linear nan", func() error { _, err := optim.Linear(math.NaN(), 0, 3, 0); return err }, "init = NaN"},
		{"cosine no steps", func() error { _, err := optim.CosineDecay(1, 0, 0, 1); return err }, "steps = 0"},
		{"warmup past decay", func() error { _, err := optim.WarmupCosineDecay(0, 1, 5, 5, 0); return err }, "warmup = 5, decay = 5"},
		{"warmup negative", func() error { _, err := optim.WarmupCosineDecay(0, 1, -1, 5, 0); return err }, "warmup = -1"},
		{"adafactor min dim", adafactorErr(func(p *optim.AdafactorParams) { p.MinDimSizeToFactor = -1 }),
			"min_dim_size_to_factor = -1 (want >= 0)"},
		{"adafactor decay rate", adafactorErr(func(p *optim.AdafactorParams) { p.DecayRate = math.NaN() }), "decay_rate = NaN"},
		{"adafactor eps", adafactorErr(func(p *optim.AdafactorParams) { p.Eps = -1e-30 }), "eps = -1e-30"},
		{"adafactor clipping", adafactorErr(func(p *optim.AdafactorParams) { p.ClippingThreshold = -1 }), "clipping_threshold = -1"},
		{"adafactor momentum", adafactorErr(func(p *optim.AdafactorParams) { p.Momentum = 1 }), "momentum = 1 (want 0 <= momentum < 1)"},
		{"adafactor weight decay", adafactorErr(func(p *optim.AdafactorParams) { p.WeightDecayRate = math.Inf(1) }),
			"weight_decay_rate = +Inf (want a finite value >= 0)"},
		{"adafactor lr", func() error { _, err := optim.Adafactor(optim.Constant(-0.5), optim.AdafactorDefaults()); return err },
			"learning_rate = -0.5"},
		{"block clip", func() error { _, err := optim.ClipByBlockRMS(math.Inf(1)); return err }, "threshold = +Inf (want a finite value > 0)"},
		{"param block rms", func() error { _, err := optim.ScaleByParamBlockRMS(-1); return err }, "min_scale = -1"},
		{"ema decay", func() error { _, err := optim.EMA(-0.1, false, dtypes.Float32); return err }, "decay = -0.1"},
		{"ema accumulator", func() error { _, err := optim.EMA(0.9, false, dtypes.Int32); return err }, "accumulator_dtype = Int32 (want a float type)"},
		{"scale", func() error { _, err := optim.Scale(math.NaN()); return err }, "step_size = NaN (want a finite value)"},
		{"decayed weights", func() error { _, err := optim.AddDecayedWeights(-1, nil); return err }, "weight_decay = -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.make()
			if !errors.Is(err, optim.ErrHyperparameter) {
				t.Fatalf("got %v, want ErrHyperparameter", err)
			}
			if !strings.HasPrefix(err.Error(), "optim: ") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not start with \"optim: \" or lacks %q", err, tc.msg)
			}
		})
	}
}

func adafactorErr(edit func(p *optim.AdafactorParams)) func() error {
	return func() error {
		_, err := adafactorWith(edit)()
		return err
	}
}

// build makes a function with float32 parameters and gradients of the given shapes, runs
// body on them and returns the module's Build error.
func build(t *testing.T, body func(f *stablehlo.Function, params, grads []stablehlo.Value)) error {
	t.Helper()
	m := stablehlo.NewModule("optim")
	f := m.Main()
	var params, grads []stablehlo.Value
	for range 2 {
		params = append(params, f.Arg(stablehlo.NewShape(dtypes.Float32, 3)))
	}
	for range 2 {
		grads = append(grads, f.Arg(stablehlo.NewShape(dtypes.Float32, 3)))
	}
	body(f, params, grads)
	if !f.Failed() {
		f.Return(params...)
	}
	_, err := m.Build()
	return err
}

func mustAdam(t *testing.T) optim.Transformation {
	t.Helper()
	o, err := optim.AdamW(optim.Constant(0.1), optim.AdamDefaults(), 0.01, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		body func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value)
		want error
		msg  string
	}{
		{"update with one gradient too few", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o := mustAdam(t)
			s := o.Init(f, p)
			o.Update(f, g[:1], s, p)
		}, optim.ErrLength, "state has 5 leaves; 1 gradients need 3"},
		{"update with params missing", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o := mustAdam(t)
			s := o.Init(f, p)
			o.Update(f, g, s, nil)
		}, optim.ErrLength, "2 gradients for 0 parameters"},
		{"state leaf of the wrong shape", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o := mustAdam(t)
			s := o.Init(f, p)
			s[2] = f.Full(stablehlo.NewShape(dtypes.Float32, 4), 0)
			o.Update(f, g, s, p)
		}, optim.ErrShape, "state leaf 2 (Like(1)) is tensor<4xf32>; want tensor<3xf32>"},
		{"count that is not int32", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o := mustAdam(t)
			s := o.Init(f, p)
			s[0] = f.ConstantOf(dtypes.Float32, 0)
			o.Update(f, g, s, p)
		}, optim.ErrShape, "state leaf 0 (Count) is tensor<f32>; want tensor<i32>"},
		{"integer parameter", func(t *testing.T, f *stablehlo.Function, p, _ []stablehlo.Value) {
			mustAdam(t).Init(f, []stablehlo.Value{p[0], f.Full(stablehlo.NewShape(dtypes.Int32, 3), 1)})
		}, optim.ErrNotFloat, "parameter 1 is tensor<3xi32>"},
		{"integer gradient", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o, _ := optim.SGD(optim.Constant(0.1), 0.9, false)
			s := o.Init(f, p)
			o.Update(f, []stablehlo.Value{g[0], f.Full(stablehlo.NewShape(dtypes.Int32, 3), 1)}, s, p)
		}, optim.ErrNotFloat, "gradient 1 is tensor<3xi32>"},
		{"adamw mask too short", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o, _ := optim.AdamW(optim.Constant(0.1), optim.AdamDefaults(), 0.1, []bool{true})
			s := o.Init(f, p)
			o.Update(f, g, s, p)
		}, optim.ErrLength, "optim.add_decayed_weights: list lengths differ: weight decay mask has 1 entries for 2 parameters"},
		{"lion mask too long at update", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o, _ := optim.Lion(optim.Constant(0.1), 0.9, 0.99, 0.1, []bool{true, false, true})
			o.Update(f, g, optim.State{f.ConstantOf(dtypes.Int32, 0), p[0], p[1]}, p)
		}, optim.ErrLength, "weight decay mask has 3 entries for 2 parameters"},
		{"adafactor mask", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o, _ := adafactorWith(func(a *optim.AdafactorParams) {
				a.WeightDecayRate = 0.1
				a.WeightDecayMask = []bool{false}
			})()
			o.Init(f, p)
		}, optim.ErrLength, "weight decay mask has 1 entries for 2 parameters"},
		{"adafactor without params", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o, _ := optim.Adafactor(optim.Constant(0.1), optim.AdafactorDefaults())
			s := o.Init(f, p)
			o.Update(f, g, s, nil)
		}, optim.ErrLength, "optim.scale_by_factored_rms: list lengths differ: 2 gradients for 0 parameters"},
		{"adafactor dummy of the wrong shape", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o, _ := optim.Adafactor(optim.Constant(0.1), optim.AdafactorDefaults())
			s := o.Init(f, p)
			s[1] = f.Full(stablehlo.NewShape(dtypes.Float32, 3), 0)
			o.Update(f, g, s, p)
		}, optim.ErrShape, "state leaf 1 (Dummy(0)) is tensor<3xf32>; want tensor<1xf32>"},
		{"apply updates of other lengths", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			optim.ApplyUpdates(f, p, g[:1])
		}, optim.ErrLength, "1 updates for 2 parameters"},
		{"apply update of another shape", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			optim.ApplyUpdates(f, p, []stablehlo.Value{g[0], f.Full(stablehlo.NewShape(dtypes.Float32, 2), 0)})
		}, optim.ErrShape, "updates 1 is tensor<2xf32>; its parameter is tensor<3xf32>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := build(t, func(f *stablehlo.Function, p, g []stablehlo.Value) { tc.body(t, f, p, g) })
			var oe *stablehlo.OpError
			if !errors.Is(err, tc.want) || !errors.As(err, &oe) {
				t.Fatalf("got %v, want an *OpError wrapping %v", err, tc.want)
			}
			if !strings.HasPrefix(oe.Op, "optim.") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q: op %q, want an optim op and %q", err, oe.Op, tc.msg)
			}
		})
	}
}

// After an error the transformations build nothing more and return nil lists.
func TestStickyError(t *testing.T) {
	err := build(t, func(f *stablehlo.Function, p, g []stablehlo.Value) {
		o := mustAdam(t)
		s := o.Init(f, p)
		optim.ApplyUpdates(f, p, nil)
		n := len(f.Ops())
		u, next := o.Update(f, g, s, p)
		if u != nil || next != nil || optim.ApplyUpdates(f, p, g) != nil || o.Init(f, p) != nil {
			t.Error("want nil lists after an error")
		}
		if len(f.Ops()) != n {
			t.Errorf("%d ops added after the error", len(f.Ops())-n)
		}
	})
	if !errors.Is(err, optim.ErrLength) {
		t.Fatalf("got %v, want the first error, ErrLength", err)
	}
}

// layoutShapes are the parameters of the layout tests: a 4x3 matrix, a vector of 5 and a
// scalar, as in the oracle, and a 2x6x8 array.
var layoutShapes = []shapes.Shape{
	shapes.Make(dtypes.Float32, 4, 3), shapes.Make(dtypes.Float32, 5), shapes.Make(dtypes.Float32),
	shapes.Make(dtypes.BFloat16, 2, 6, 8),
}

func adafactorWith(edit func(p *optim.AdafactorParams)) func() (optim.Transformation, error) {
	return func() (optim.Transformation, error) {
		p := optim.AdafactorDefaults()
		edit(&p)
		return optim.Adafactor(optim.Constant(0.01), p)
	}
}

var layoutTests = []struct {
	name   string
	opt    func() (optim.Transformation, error)
	layout string
	shapes string
	specs  string
}{
	{"sgd", func() (optim.Transformation, error) { return optim.SGD(optim.Constant(0.1), 0, false) }, "[]", "[]", "[]"},
	{"nesterov with schedule", func() (optim.Transformation, error) {
		s, err := optim.Linear(1, 0, 10, 0)
		if err != nil {
			return nil, err
		}
		return optim.SGD(s, 0.9, true)
	}, "[Like(0) Like(1) Like(2) Like(3) Count]",
		"[tensor<4x3xf32> tensor<5xf32> tensor<f32> tensor<2x6x8xbf16> tensor<i32>]",
		"[P(None, 'x') P('y',) P() P('x', None, 'y') P()]"},
	{"clip then adamw", func() (optim.Transformation, error) {
		clip, err := optim.ClipByGlobalNorm(1)
		if err != nil {
			return nil, err
		}
		adamw, err := optim.AdamW(optim.Constant(0.1), optim.AdamDefaults(), 1e-4, []bool{true, false, true, true})
		return optim.Chain(clip, adamw), err
	}, "[Count Like(0) Like(1) Like(2) Like(3) Like(0) Like(1) Like(2) Like(3)]", "",
		"[P() P(None, 'x') P('y',) P() P('x', None, 'y') P(None, 'x') P('y',) P() P('x', None, 'y')]"},
	{"lion", func() (optim.Transformation, error) { return optim.Lion(optim.Constant(1e-3), 0.9, 0.99, 1e-3, nil) },
		"[Count Like(0) Like(1) Like(2) Like(3)]", "", ""},
	{"adafactor defaults", adafactorWith(func(*optim.AdafactorParams) {}),
		"[Count Dummy(0) Dummy(1) Dummy(2) Dummy(3) Dummy(0) Dummy(1) Dummy(2) Dummy(3) Like(0) Like(1) Like(2) Like(3)]",
		"[tensor<i32> tensor<1xf32> tensor<1xf32> tensor<1xf32> tensor<1xbf16> tensor<1xf32> tensor<1xf32> tensor<1xf32> tensor<1xbf16> " +
			"tensor<4x3xf32> tensor<5xf32> tensor<f32> tensor<2x6x8xbf16>]",
		"[P() P() P() P() P() P() P() P() P() P(None, 'x') P('y',) P() P('x', None, 'y')]"},
	{"adafactor factored with momentum", adafactorWith(func(p *optim.AdafactorParams) {
		p.MinDimSizeToFactor = 3
		p.Momentum = 0.9
	}),
		"[Count Row(0, -dim 0) Dummy(1) Dummy(2) Row(3, -dim 2) Col(0, -dim 1) Dummy(1) Dummy(2) Col(3, -dim 1) " +
			"Dummy(0) Like(1) Like(2) Dummy(3) Count Like(0) Like(1) Like(2) Like(3)]",
		"[tensor<i32> tensor<3xf32> tensor<1xf32> tensor<1xf32> tensor<2x6xbf16> tensor<4xf32> tensor<1xf32> tensor<1xf32> tensor<2x8xbf16> " +
			"tensor<1xf32> tensor<5xf32> tensor<f32> tensor<1xbf16> tensor<i32> tensor<4x3xf32> tensor<5xf32> tensor<f32> tensor<2x6x8xf32>]",
		"[P() P('x',) P() P() P('x', None) P(None,) P() P() P('x', 'y') P() P('y',) P() P() P() P(None, 'x') P('y',) P() P('x', None, 'y')]"},
	{"adafactor not factored, schedule", func() (optim.Transformation, error) {
		s, err := optim.Linear(1, 0, 10, 0)
		if err != nil {
			return nil, err
		}
		p := optim.AdafactorDefaults()
		p.MinDimSizeToFactor = 1
		p.Factored = false
		return optim.Adafactor(s, p)
	}, "[Count Dummy(0) Dummy(1) Dummy(2) Dummy(3) Dummy(0) Dummy(1) Dummy(2) Dummy(3) Like(0) Like(1) Like(2) Like(3) Count]", "", ""},
}

// layoutSpecs are the parameters' partition specs in the layout tests.
var layoutSpecs = []mesh.PartitionSpec{mesh.P(nil, "x"), mesh.P("y"), mesh.P(), mesh.P("x", nil, "y")}

func TestLayout(t *testing.T) {
	for _, tc := range layoutTests {
		t.Run(tc.name, func(t *testing.T) {
			opt, err := tc.opt()
			if err != nil {
				t.Fatal(err)
			}
			layout := opt.Layout(layoutShapes)
			if got := fmt.Sprint(layout); got != tc.layout {
				t.Errorf("Layout = %s, want %s", got, tc.layout)
			}
			var got []string
			for _, l := range layout {
				got = append(got, l.Shape.String())
			}
			if tc.shapes != "" && fmt.Sprint(got) != tc.shapes && !(len(got) == 0 && tc.shapes == "[]") {
				t.Errorf("leaf shapes = %v, want %s", got, tc.shapes)
			}
			if tc.specs != "" {
				specs, err := optim.StateSpecs(opt, layoutShapes, layoutSpecs)
				if err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprint(specs); got != tc.specs {
					t.Errorf("StateSpecs = %s, want %s", got, tc.specs)
				}
			}
			// Init builds leaves of the shapes Layout gives.
			m := stablehlo.NewModule("layout")
			f := m.Main()
			var params []stablehlo.Value
			for _, s := range layoutShapes {
				params = append(params, f.Arg(s))
			}
			state := opt.Init(f, params)
			if f.Failed() {
				_, err := m.Build()
				t.Fatal(err)
			}
			if len(state) != len(layout) {
				t.Fatalf("Init gave %d leaves, Layout %d", len(state), len(layout))
			}
			for k, l := range layout {
				if !state[k].Shape().Equal(l.Shape) {
					t.Errorf("leaf %d: Init gave %s, Layout %s", k, state[k].Shape(), l.Shape)
				}
			}
		})
	}
}

func TestStateSpecsErrors(t *testing.T) {
	adam := mustAdam(t)
	tests := []struct {
		name   string
		shapes []shapes.Shape
		specs  []mesh.PartitionSpec
		want   error
		msg    string
	}{
		{"too few specs", layoutShapes, layoutSpecs[:3], optim.ErrLength, "optim: state specs: list lengths differ: 3 specs for 4 parameters"},
		{"spec longer than rank", layoutShapes[:2], []mesh.PartitionSpec{mesh.P(), mesh.P("x", nil)}, optim.ErrShape,
			"optim: state specs: shape does not match its parameter: spec P('x', None) of parameter 1 has 2 entries for 1 dimensions (tensor<5xf32>)"},
		{"bad spec", layoutShapes[:1], []mesh.PartitionSpec{mesh.P(3)}, mesh.ErrInvalidSpec, "optim: state specs: parameter 0: mesh: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := optim.StateSpecs(adam, tc.shapes, tc.specs)
			if !errors.Is(err, tc.want) || got != nil {
				t.Fatalf("got %v, %v; want nil and an error wrapping %v", got, err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to start with %q", err, tc.msg)
			}
		})
	}
}
