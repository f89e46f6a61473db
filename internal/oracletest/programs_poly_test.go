package oracletest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// polyFile is testdata/oracle/programs_poly.json (tools/oracle/programs_poly.py).
type polyFile struct {
	JAXVersion string `json:"jax_version"`
	Programs   []struct {
		Name     string      `json:"name"`
		About    string      `json:"about"`
		Mesh     programMesh `json:"mesh"`
		InSpecs  [][]any     `json:"in_specs"`
		OutSpecs [][]any     `json:"out_specs"`
		Exported string      `json:"exported"`
		Text     string      `json:"text"`
		InDims   [][]string  `json:"in_dims"`
		Calls    []struct {
			Sizes   map[string]int `json:"sizes"`
			Inputs  []arrayJSON    `json:"inputs"`
			Outputs []arrayJSON    `json:"outputs"`
		} `json:"calls"`
		Variants []struct {
			Name     string        `json:"name"`
			Mesh     programMesh   `json:"mesh"`
			InSpecs  [][]any       `json:"in_specs"`
			OutSpecs [][]any       `json:"out_specs"`
			Outputs  [][]arrayJSON `json:"outputs"`
		} `json:"variants"`
		BadCall struct {
			Inputs []arrayJSON `json:"inputs"`
			Error  string      `json:"error"`
		} `json:"bad_call"`
	} `json:"programs"`
}

// TestProgramsPoly runs the shape-polymorphism corpus: each program, exported by JAX with a
// symbolic batch (4*b, sharded) and sequence (t), is read with jaxexport (its avals
// symbolic), and called through one jit.FromExported function at three sizes, as exported and
// re-sharded onto each variant's mesh and specs; and from the module as JAX printed it
// (jit.FromText of Exported.mlir_module()), as written and re-sharded onto the first variant:
// package refine makes the module static for
// each call's shapes (one lowering and one executable per size, a cache hit when a size
// comes again). Outputs are compared with JAX's like the programs corpus's. A call whose
// shapes break the specification fails with jit.ErrArguments and JAX's message.
func TestProgramsPoly(t *testing.T) { runPoly(t, "programs_poly", "programs_poly.json") }

// TestProgramsPoly081 runs the same corpus as exported by JAX 0.8.1 (programs_poly081.json,
// written once with tools/oracle/programs_poly.py in a JAX 0.8.1 venv and frozen, see
// tools/oracle/frozen.sha256), as TestProgramsPoly does.
func TestProgramsPoly081(t *testing.T) { runPoly(t, "programs_poly081", "programs_poly081.json") }

func runPoly(t *testing.T, group, file string) {
	raw, err := os.ReadFile(filepath.Join(goldenDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var f polyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	c := pjrttest.Client(t)
	report.noteGroup(group, fmt.Sprintf("The programs of `testdata/oracle/%s` (jax %s), exported "+
		"with symbolic shapes and called at three sizes each, run on the pinned CPU plugin through `jit.FromExported`: "+
		"**exported** on the program's mesh as JAX exported it, and re-sharded onto each variant (InSpecs/OutSpecs); "+
		"and through `jit.FromText` of the module as JAX printed it: **text** as written, and **text/** the first variant re-sharded; "+
		"the module refined for each call's shapes by package `refine`. Outputs are compared with JAX's as in the "+
		"programs corpus; `bad call` is a call whose batch is not a multiple of 4, which must fail with JAX's message.",
		file, f.JAXVersion))
	for _, p := range f.Programs {
		t.Run(p.Name, func(t *testing.T) {
			pjrttest.NeedDevices(t, devicesNeeded(p.Mesh.Shape, p.Mesh.DeviceIDs))
			b, err := base64.StdEncoding.DecodeString(p.Exported)
			if err != nil {
				t.Fatal(err)
			}
			e, err := jaxexport.Read(b)
			if err != nil {
				t.Fatal(err)
			}
			if !e.Polymorphic() || fmt.Sprint(e.InDims()) != fmt.Sprint(p.InDims) {
				t.Errorf("jaxexport reads dimensions %v (polymorphic %v), JAX wrote %v", e.InDims(), e.Polymorphic(), p.InDims)
			}
			report.aboutProgram(p.Name, p.About, "shardy")
			run := func(run string, fn *jit.Function, pm programMesh, inSpecs [][]any, outputs func(k int) []arrayJSON) {
				for round := range 2 { // the second round hits the caches
					for k, call := range p.Calls {
						diffs, inexact := runProgram(t, c, fn, pm, inSpecs, call.Inputs, outputs(k))
						if round == 0 {
							name := fmt.Sprintf("%s/%s b=%d t=%d", p.Name, run, call.Sizes["b"], call.Sizes["t"])
							report.check(t, group, name, diffs)
							report.noteRun(group, name, inexact)
						}
					}
				}
				if s := fn.Stats(); s.LoweringMisses != int64(len(p.Calls)) || s.CompileMisses != int64(len(p.Calls)) {
					t.Errorf("%s: %+v; want one lowering and one compile per size", run, s)
				}
			}
			fn, err := jit.FromExported(e)
			if err != nil {
				t.Fatal(err)
			}
			defer fn.Close()
			run("exported", fn, p.Mesh, p.InSpecs, func(k int) []arrayJSON { return p.Calls[k].Outputs })
			// The module as JAX printed it (custom forms, locations), as written and re-sharded.
			tf, err := jit.FromText(p.Name, p.Text)
			if err != nil {
				t.Fatal(err)
			}
			defer tf.Close()
			run("text", tf, p.Mesh, p.InSpecs, func(k int) []arrayJSON { return p.Calls[k].Outputs })
			if len(p.Variants) > 0 {
				v := p.Variants[0]
				vf, err := jit.FromText(p.Name, p.Text, jit.InSpecs(specsOf(v.InSpecs)...), jit.OutSpecs(specsOf(v.OutSpecs)...))
				if err != nil {
					t.Fatal(err)
				}
				defer vf.Close()
				run("text/"+v.Name, vf, v.Mesh, v.InSpecs, func(k int) []arrayJSON { return v.Outputs[k] })
			}
			for _, v := range p.Variants {
				vf, err := jit.FromExported(e, jit.InSpecs(specsOf(v.InSpecs)...), jit.OutSpecs(specsOf(v.OutSpecs)...))
				if err != nil {
					t.Fatal(err)
				}
				pjrttest.NeedDevices(t, devicesNeeded(v.Mesh.Shape, v.Mesh.DeviceIDs))
				run(v.Name, vf, v.Mesh, v.InSpecs, func(k int) []arrayJSON { return v.Outputs[k] })
				vf.Close()
			}
			// The bad call, replicated on the program's mesh.
			m, err := meshOf(c, p.Mesh)
			if err != nil {
				t.Fatal(err)
			}
			var args []*jit.Array
			for i, in := range p.BadCall.Inputs {
				dt, data, err := encodeArray(in)
				if err != nil {
					t.Fatal(err)
				}
				s, err := mesh.NewNamedSharding(m, mesh.P())
				if err != nil {
					t.Fatal(err)
				}
				a, err := jit.PutBytes(c, dt, in.Shape, data, s)
				if err != nil {
					t.Fatalf("bad call input %d: %v", i, err)
				}
				defer a.Close()
				args = append(args, a)
			}
			bf, err := jit.FromExported(e, jit.Reshard())
			if err != nil {
				t.Fatal(err)
			}
			defer bf.Close()
			_, err = bf.Call(c, args...)
			var diffs []string
			switch {
			case err == nil:
				diffs = []string{"the call ran; JAX says: " + p.BadCall.Error}
			case !errors.Is(err, jit.ErrArguments) || !strings.Contains(err.Error(), p.BadCall.Error):
				diffs = []string{fmt.Sprintf("xlamesh: %v\nJAX: %s", err, p.BadCall.Error)}
			}
			report.check(t, group, p.Name+"/bad call", diffs)
		})
	}
}
