package oracletest

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The goldens are JAX's values on XLA's CPU plugin. On a GPU (XLAMESH_TEST_PLATFORM=gpu, the GPU
// bundle) the same programs run through XLA's GPU compiler, whose transcendental functions,
// fused multiply-adds and reduction orders differ from the CPU's in the last bits: JAX on that
// GPU prints the same values as xlamesh there, not the CPU's. So on a GPU, and only there, a float
// output element that is not bit-equal to the golden passes when it is within gpuTolerance of it;
// integers, bools and every lowered text are still compared exactly. On CPU nothing changes.

// onGPU reports whether the suite runs on a GPU plugin.
func onGPU() bool {
	p, err := pjrttest.Platform()
	return err == nil && p == "gpu"
}

// gpuTolerance is the (relative, absolute) tolerance of a float dtype on a GPU: |xlamesh - JAX|
// <= atol + rtol*|JAX|, numpy's allclose. The relative parts are a few units in the last place
// (f32: 2^-23 ~ 1.2e-7, bf16 2^-7 per ulp at worst, f16 2^-10); the absolute part covers values
// near zero that come out of a cancellation (gelu's 1+tanh(x) for x ~ -5: JAX -5.10e-6, the GPU's
// tanh approximation -5.50e-6, a difference of 4e-7).
func gpuTolerance(d dtypes.DType) (rtol, atol float64) {
	switch d {
	case dtypes.Float64:
		return 1e-12, 1e-14
	case dtypes.BFloat16:
		return 1.0 / 128, 1e-3
	case dtypes.Float16:
		return 2.0 / 1024, 1e-4
	}
	return 1e-5, 1e-6
}

// gpuTolerant lets gpuClose tolerate on a GPU; the tests of the comparators themselves turn it
// off (strictComparators), since they check what the comparators catch bit for bit.
var gpuTolerant = true

// strictComparators turns the GPU tolerance off until t ends.
func strictComparators(t testing.TB) {
	gpuTolerant = false
	t.Cleanup(func() { gpuTolerant = true })
}

// gpuLoose reports whether the GPU tolerances apply: on a GPU, outside the comparators' own tests.
func gpuLoose() bool { return gpuTolerant && onGPU() }

// tf32Tolerance is, on a GPU, the relative tolerance of float32 results that went through a
// matrix product or a convolution: XLA's GPU compiler multiplies float32 matrices in
// TensorFloat-32 (a 10-bit mantissa, a rounding of 2^-11) at JAX's default precision, as JAX on
// that GPU does. Eight such roundings: on an H200 (2026-11-28) the corpus's programs came within
// 4.4e-4 of JAX's CPU values, relative to the array's largest magnitude, and the attention
// gradient, through four chained products, within 2.0e-3 in one run of the autotuner's choices
// and 2.03e-3 in another. On CPU the tolerances stay f32Tolerance and vjpTol.
const tf32Tolerance = 4e-3

// programTolerance is the float32 tolerance of program outputs, relative to the array's largest
// magnitude: f32Tolerance, or tf32Tolerance on a GPU.
func programTolerance() float64 {
	if gpuLoose() {
		return tf32Tolerance
	}
	return f32Tolerance
}

// vjpTolerance is the relative tolerance of the vjp group's inexact comparisons: vjpTol, or
// tf32Tolerance on a GPU (where the exact ones become inexact too: transcendentals differ).
func vjpTolerance() float64 {
	if gpuLoose() {
		return tf32Tolerance
	}
	return vjpTol
}

// gpuClose reports whether got is within d's GPU tolerance of want (false off a GPU).
func gpuClose(d dtypes.DType, want, got float64) bool {
	if !gpuLoose() {
		return false
	}
	rtol, atol := gpuTolerance(d)
	return math.Abs(want-got) <= atol+rtol*math.Abs(want)
}

// gpuRefusals are the cases XLA's GPU compiler refuses to compile, as it would JAX's program:
// on a GPU the case passes when its compile error holds the text given, and is logged.
var gpuRefusals = map[string]string{
	// ops_data/conv_int32: cuDNN convolves integers only in a few layouts (int8 with channels in
	// multiples of 4); XLA's GPU compiler says "Can't lower one or more integer convolutions to
	// idioms supported by CuDNN", and JAX's lax.conv on int32 fails the same way there.
	"conv_int32": "integer convolutions to idioms supported by CuDNN",
}

// gpuUnspecified are the cases whose golden holds a choice StableHLO leaves to the compiler, which
// XLA's GPU compiler makes otherwise than its CPU one: on a GPU their differences are logged.
var gpuUnspecified = map[string]string{
	// Which of the updates to a repeated index a replacing scatter keeps is unspecified; XLA's CPU
	// keeps the last, its deterministic GPU scatter the first (H200, 2026-11-28: out[6] 1 where
	// JAX's CPU golden has -2), and the gradient follows the forward scatter's choice on both
	// (autodiff's TestRulesGradcheck/scatter_set_repeated checks that against finite
	// differences on the GPU too).
	"vjp/scatter_set_repeated": "a scatter's winner among repeated indices",
}

// gpuRefused reports whether err is the GPU compiler's known refusal of the case name.
func gpuRefused(name string, err error) bool {
	want, ok := gpuRefusals[name]
	return ok && err != nil && onGPU() && strings.Contains(err.Error(), want)
}

// gpuFlags is added to XLA_FLAGS on a GPU before any client opens (TestMain):
// --xla_allow_excess_precision=false keeps every narrowing conversion as the program says, as
// XLA's CPU compiler does; otherwise the GPU compiler computes bf16 and float8 values in f32 and
// removes a round trip f32 -> float8 -> f32 altogether (ops_types/convert_float8_*: 0.3 back
// instead of float8's 0.3125), which is XLA's choice, not the program's value.
// --xla_gpu_deterministic_ops=true makes scatters deterministic: with repeated indices the
// winner is otherwise decided by atomics, and the gradient's scatter of update ids may pick
// another than the forward scatter (vjp/scatter_set_repeated; see autodiff's scatterRule).
const gpuFlags = "--xla_allow_excess_precision=false --xla_gpu_deterministic_ops=true"

// setGPUFlags adds gpuFlags to XLA_FLAGS when the suite runs on a GPU.
func setGPUFlags() {
	if onGPU() && !strings.Contains(os.Getenv("XLA_FLAGS"), "xla_allow_excess_precision") && !strings.Contains(os.Getenv("XLA_FLAGS"), "xla_gpu_deterministic_ops") {
		os.Setenv("XLA_FLAGS", strings.TrimSpace(os.Getenv("XLA_FLAGS")+" "+gpuFlags))
	}
}

// TestGPUTolerance pins the tolerance rule: on CPU nothing is close but equality, and the rule's
// numbers are the ones documented above.
func TestGPUTolerance(t *testing.T) {
	if !onGPU() && gpuClose(dtypes.Float32, 1, 1+1e-7) {
		t.Error("gpuClose holds off a GPU")
	}
	for _, c := range []struct {
		d         dtypes.DType
		want, got float64
		close     bool
	}{
		{dtypes.Float32, -0.46364760398864746, -0.46364763379096985, true}, // atan2 on an H200
		{dtypes.Float32, -5.0961971282958984e-06, -5.498528480529785e-06, true},
		{dtypes.Float32, 0.3125, 0.30000001192092896, false},
		{dtypes.Float32, 1, 1.0001, false},
		{dtypes.BFloat16, 0.57421875, 0.5703125, true},
		{dtypes.BFloat16, 0.5, 0.48, false},
		{dtypes.Float64, 1, 1 + 1e-13, true},
		{dtypes.Float64, 1, 1 + 1e-9, false},
	} {
		rtol, atol := gpuTolerance(c.d)
		if got := math.Abs(c.want-c.got) <= atol+rtol*math.Abs(c.want); got != c.close {
			t.Errorf("%v: %v vs %v within (%g, %g): %v, want %v", c.d, c.want, c.got, rtol, atol, got, c.close)
		}
	}
}

// refusedOffCPU reports whether diffs is exactly jit's refusal to run a jax.export artifact
// exported for cpu alone on this client of another platform, which JAX refuses too (JAX's
// "was lowered for platforms ('cpu',) but it is used on ('cuda',)"); the module's text, run
// as text, is compared there instead.
func refusedOffCPU(platform string, diffs []string) bool {
	return platform != "cpu" && len(diffs) == 1 &&
		strings.Contains(diffs[0], "cannot run external module: the module was exported for [cpu], the client runs "+platform)
}
