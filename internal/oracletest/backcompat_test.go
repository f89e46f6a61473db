package oracletest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// backCompatFile is testdata/oracle/backcompat.json (tools/oracle/backcompat.py): the modules of
// JAX's export backward-compatibility test data, with JAX's inputs and expected outputs.
type backCompatFile struct {
	JAXVersion string `json:"jax_version"`
	Artifacts  []struct {
		Name              string      `json:"name"`
		Platform          string      `json:"platform"`
		BytecodeVersion   int         `json:"bytecode_version"`
		NrDevices         int         `json:"nr_devices"`
		CustomCallTargets []string    `json:"custom_call_targets"`
		Module            string      `json:"module"`
		Text              string      `json:"text"`
		Inputs            []arrayJSON `json:"inputs"`
		Outputs           []arrayJSON `json:"outputs"`
	} `json:"artifacts"`
}

// xlaTargets are the custom calls the plain XLA CPU plugin runs itself (the partitioner's
// markers and Shardy's round-trip calls); an artifact that calls only these runs on CPU.
var xlaTargets = []string{"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "xla.sdy.FuncResultSharding",
	"annotate_device_placement",
	// What package refine makes of a module with symbolic shapes.
	"shape_assertion", "stablehlo.dynamic_top_k", "stablehlo.dynamic_approx_top_k", "stablehlo.dynamic_rng_bit_generator", "stablehlo.dynamic_reduce_window"}

// TestBackCompatRun runs, on the pinned CPU plugin, every module of JAX's export
// backward-compatibility data that plain XLA can run on CPU, whatever platform it was exported
// for (custom calls only of xlaTargets; symbolic shapes refined for the inputs by package
// refine), written from 2023 on in MLIR bytecode versions 0 to 6: jit.FromBytecode, as
// written, on the first nr_devices devices (NumPartitions for the modules that do not say),
// inputs replicated and moved by Reshard; outputs compared with JAX's expected ones like the
// programs corpus's. Modules that call LAPACK kernels run where xlamesh serves every kernel
// they call (pjrt.Plugin.LAPACK, over the LAPACK `make setup` installs); the others must fail to
// compile with an error that names the handler and the package that provides it (issue 32
// brings the rest).
func TestBackCompatRun(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(goldenDir, "backcompat.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f backCompatFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	c := pjrttest.Client(t)
	report.noteGroup("backcompat", fmt.Sprintf("The modules of JAX's own export backward-compatibility test data "+
		"(`testdata/oracle/backcompat.json`, read from jax %s by tools/oracle/backcompat.py) that plain XLA runs on CPU, "+
		"whatever platform they were exported for: `jit.FromBytecode` as written, with `NumPartitions` and `Reshard`; "+
		"**text**: `jit.FromText` of the module as JAX printed it in the data, the same way; **re-sharded**: `jit.FromBytecode` "+
		"with InSpecs and OutSpecs replicating every input and result on a mesh of at least two devices (axis `a`, as the data's meshes); "+
		"outputs compared with JAX's expected outputs. The modules that call jaxlib's LAPACK kernels run where xlamesh serves every kernel "+
		"they call (`pjrt.Plugin.LAPACK`, over the LAPACK of `xlamesh install-plugin -plugin lapack`), their float outputs compared "+
		"within the tolerances of JAX's own back-compat tests of those kernels (rtol 1e-3 and atol 1e-4 for f32 and c64, "+
		"1e-5 and 1e-12 for f64 and c128: two LAPACK builds agree only to the last bits); the others are refused at compile "+
		"with an error naming the kernel.", f.JAXVersion))
	ran, eligible := map[int]int{}, map[int]int{} // modules run, and those this host and plugin can run
	for _, a := range f.Artifacts {
		runnable, lapack := true, false
		for _, cc := range a.CustomCallTargets {
			if !slices.Contains(xlaTargets, cc) {
				runnable = false
			}
			if strings.HasPrefix(cc, "lapack_") || strings.HasPrefix(cc, "blas_") {
				lapack = true
			}
		}
		if !runnable && !lapack {
			continue
		}
		t.Run(a.Name, func(t *testing.T) {
			code, err := base64.StdEncoding.DecodeString(a.Module)
			if err != nil {
				t.Fatal(err)
			}
			n := max(1, a.NrDevices)
			pjrttest.NeedDevices(t, n)
			eligible[a.BytecodeVersion]++
			name := strings.ReplaceAll(a.Name, "/", "_")
			m, err := mesh.New(jit.Devices(c)[:n], []int{n}, "x")
			if err != nil {
				t.Fatal(err)
			}
			// call puts the inputs replicated on a mesh, calls fn and compares its outputs
			// with JAX's; err is the call's error.
			call := func(fn *jit.Function, on mesh.Mesh) (diffs []string, err error) {
				args := make([]*jit.Array, len(a.Inputs))
				defer func() {
					for _, x := range args {
						if x != nil {
							x.Close()
						}
					}
				}()
				for i, in := range a.Inputs {
					dt, data, err := encodeArray(in)
					if err != nil {
						t.Fatalf("input %d: %v", i, err)
					}
					s, err := mesh.NewNamedSharding(on, mesh.P())
					if err != nil {
						t.Fatal(err)
					}
					if args[i], err = jit.PutBytes(c, dt, in.Shape, data, s); err != nil {
						t.Fatalf("input %d: %v", i, err)
					}
				}
				outs, err := fn.Call(c, args...)
				if err != nil {
					return []string{"call: " + err.Error()}, err
				}
				defer func() {
					for _, o := range outs {
						o.Close()
					}
				}()
				if len(outs) != len(a.Outputs) {
					diffs = append(diffs, fmt.Sprintf("JAX returns %d outputs, xlamesh %d", len(a.Outputs), len(outs)))
				}
				for i := range min(len(outs), len(a.Outputs)) {
					got, err := outs[i].ToHostBytes()
					if err != nil {
						diffs = append(diffs, fmt.Sprintf("output %d: %v", i, err))
						continue
					}
					d, _ := compareProgramOutput(a.Outputs[i], outs[i].DType(), outs[i].Shape(), got)
					if rtol, atol, ok := lapackTolerance(outs[i].DType()); lapack && ok {
						// LAPACK builds differ in the last bits: JAX's own test allows it.
						d = compareClose(a.Outputs[i], outs[i].DType(), outs[i].Shape(), got, rtol, atol)
					}
					if d != "" {
						diffs = append(diffs, fmt.Sprintf("output %d: %s", i, d))
					}
				}
				return diffs, nil
			}
			fn, err := jit.FromBytecode(name, code, jit.NumPartitions(n), jit.Reshard(), jit.WithMesh(m))
			if err != nil {
				t.Fatal(err)
			}
			defer fn.Close()
			diffs, err := call(fn, m)
			if lapack && !servesAll(c, a.CustomCallTargets) {
				if err == nil {
					t.Fatal("a LAPACK module compiled")
				}
				if !errors.Is(err, pjrt.ErrCompile) || !strings.Contains(err.Error(), a.CustomCallTargets[0]+" is a LAPACK kernel of jaxlib") {
					t.Errorf("the error does not name %s and the package that provides it: %v", a.CustomCallTargets[0], err)
				}
				eligible[a.BytecodeVersion]-- // refused, as it should be: not one that runs
				return
			}
			_, minor := c.Plugin().APIVersion()
			if err != nil && minor < pjrt.MemorySpacesMinor && slices.Contains(a.CustomCallTargets, "annotate_device_placement") &&
				errors.Is(err, pjrt.ErrUnimplemented) && strings.Contains(err.Error(), "annotate_device_placement") {
				// The API 0.81 plugin (2024) predates memory kinds: it has no implementation of
				// JAX's placement annotations, and pjrt refuses them before it sees them.
				t.Logf("refused by the API 0.%d plugin, which has no memory kinds: %v", minor, err)
				eligible[a.BytecodeVersion]--
				return
			}
			report.aboutProgram(a.Name, fmt.Sprintf("JAX's back-compat module, exported for %s, MLIR bytecode version %d", a.Platform, a.BytecodeVersion), "as written")
			report.check(t, "backcompat", a.Name+"/as written", diffs)
			if len(diffs) == 0 {
				ran[a.BytecodeVersion]++
			}

			// The module as JAX printed it when it wrote the data (when its text is of the same
			// module as its bytecode: see refine's TestPrettyForms), run the same way.
			if a.Text != "" && a.Name != "tpu_Sharding/data_2025_06_30/gspmd" {
				tf, err := jit.FromText(name, a.Text, jit.NumPartitions(n), jit.Reshard(), jit.WithMesh(m))
				if err != nil {
					diffs = []string{"jit.FromText: " + err.Error()}
				} else {
					diffs, _ = call(tf, m)
					tf.Close()
				}
				report.check(t, "backcompat", a.Name+"/text", diffs)
			}

			// Re-sharded: the module's own shardings replaced, every input and result replicated,
			// on a mesh of at least two devices whose axis is named as the data's meshes name
			// theirs (a module's shard_map moves only to a mesh with its axis names). A one-GPU
			// host has run the module as written and stops here.
			pjrttest.NeedDevices(t, max(n, 2))
			rm, err := mesh.New(jit.Devices(c)[:max(n, 2)], []int{max(n, 2)}, "a")
			if err != nil {
				t.Fatal(err)
			}
			replicated := func(k int) []mesh.PartitionSpec {
				out := make([]mesh.PartitionSpec, k)
				for i := range out {
					out[i] = mesh.P()
				}
				return out
			}
			rf, err := jit.FromBytecode(name, code, jit.WithMesh(rm), jit.InSpecs(replicated(len(a.Inputs))...),
				jit.OutSpecs(replicated(len(a.Outputs))...))
			if err != nil {
				t.Fatal(err)
			}
			defer rf.Close()
			diffs, _ = call(rf, rm)
			report.check(t, "backcompat", a.Name+"/re-sharded", diffs)
		})
	}
	// Every version among the modules this host and plugin can run: all three on 8 devices.
	t.Logf("ran, by bytecode version: %v (of %v this host and plugin can run)", ran, eligible)
	if ran[0] < min(1, eligible[0]) || ran[1] < min(1, eligible[1]) || ran[6] < min(2, eligible[6]) || eligible[0] == 0 {
		t.Errorf("ran %v by bytecode version; want modules of versions 0, 1 and 6 (those this host and plugin can run: %v)", ran, eligible)
	}
}

// servesAll reports whether the client's plugin serves every LAPACK kernel of targets.
func servesAll(c *pjrt.Client, targets []string) bool {
	served := c.Plugin().LAPACK().Targets
	for _, t := range targets {
		if (strings.HasPrefix(t, "lapack_") || strings.HasPrefix(t, "blas_")) && !slices.Contains(served, t) {
			return false
		}
	}
	return true
}

// lapackTolerance is the tolerance of JAX's own back-compat tests of its CPU LAPACK kernels
// (tests/export_back_compat_test.py: rtol and atol by dtype): two LAPACK builds agree only to
// the last bits of a float64 factorization. ok is false for the dtypes compared exactly.
func lapackTolerance(dt dtypes.DType) (rtol, atol float64, ok bool) {
	switch dt {
	case dtypes.Float32, dtypes.Complex64:
		return 1e-3, 1e-4, true
	case dtypes.Float64, dtypes.Complex128:
		return 1e-5, 1e-12, true
	}
	return 0, 0, false
}

// compareClose compares a float or complex output with JAX's as numpy.allclose does, element
// by element: |got - want| <= atol + rtol*|want| (complex moduli), NaN only against NaN. It
// returns "" or the first difference.
func compareClose(w arrayJSON, dt dtypes.DType, shape []int, got []byte, rtol, atol float64) string {
	wdt, want, err := encodeArray(w)
	if err != nil {
		return err.Error()
	}
	if dt != wdt || fmt.Sprint(shape) != fmt.Sprint(w.Shape) {
		return fmt.Sprintf("JAX %s%v, xlamesh %s%v", w.DType, w.Shape, dt, shape)
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, JAX %d", len(got), len(want))
	}
	g, x := floatParts(dt, got), floatParts(dt, want)
	step := 1
	if dt == dtypes.Complex64 || dt == dtypes.Complex128 {
		step = 2
	}
	for i := 0; i+step <= len(x); i += step {
		var diff, mag float64
		nan := false
		for k := range step {
			diff = math.Hypot(diff, g[i+k]-x[i+k])
			mag = math.Hypot(mag, x[i+k])
			nan = nan || math.IsNaN(g[i+k]) != math.IsNaN(x[i+k])
		}
		if nan || diff > atol+rtol*mag {
			return fmt.Sprintf("element %d: JAX %v, xlamesh %v (rtol %g, atol %g)", i/step, x[i:i+step], g[i:i+step], rtol, atol)
		}
	}
	return ""
}

// floatParts reads little-endian f32, f64, c64 or c128 data as float64s (a complex number as
// its real and imaginary parts).
func floatParts(dt dtypes.DType, data []byte) []float64 {
	var out []float64
	switch dt {
	case dtypes.Float32, dtypes.Complex64:
		for i := 0; i+4 <= len(data); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(data[i:]))))
		}
	default:
		for i := 0; i+8 <= len(data); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))
		}
	}
	return out
}
