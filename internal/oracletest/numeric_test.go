package oracletest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// xlameshModule lowers a case with xlamesh (set by lowering_test.go); nil
// leaves xlamesh's own lowering out of the numeric comparison.
var xlameshModule func(c loweringCase) (string, error)

// runModule compiles text for the case's mesh on the real CPU plugin, feeds
// each device its block of x = arange(prod(shape)) per argument (split by
// the argument's sharding), runs it and assembles the global result from the
// devices' blocks (split by the result sharding). Replicated blocks must agree.
func runModule(t *testing.T, c loweringCase, text string) ([]float64, []int, error) {
	client := pjrttest.Client(t)
	ids := c.Mesh.Devices
	if ids == nil {
		for i := range len(cpuDevices) {
			ids = append(ids, i)
		}
		ids = ids[:prod(c.Mesh.Shape)]
	}
	devs := make([]mesh.Device, len(ids))
	pdevs := make([]*pjrt.Device, len(ids))
	for i, id := range ids {
		d, err := client.Device(id)
		if err != nil {
			return nil, nil, err
		}
		devs[i], pdevs[i] = d, d
	}
	m, err := mesh.New(devs, c.Mesh.Shape, c.Mesh.Names...)
	if err != nil {
		return nil, nil, err
	}
	opts := pjrt.CompileOptions{NumPartitions: m.Size(), DeviceAssignment: m.DeviceIDs()}
	if c.Partitioner == "gspmd" {
		opts.Partitioner = pjrt.GSPMD
	}
	exe, err := client.Compile(text, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("compile: %w", err)
	}
	defer exe.Close()
	args := make([][]*pjrt.Buffer, m.Size())
	defer func() {
		for _, l := range args {
			for _, b := range l {
				b.Close()
			}
		}
	}()
	for _, a := range c.Args {
		s, err := mesh.NewNamedSharding(m, specOf(a.Spec))
		if err != nil {
			return nil, nil, err
		}
		idx, err := s.DevicesIndicesMap(a.Shape)
		if err != nil {
			return nil, nil, err
		}
		for d := range pdevs {
			block, dims := sliceIota(a.Shape, idx[d])
			var flat any
			switch a.DType {
			case "f32":
				v := make([]float32, len(block))
				for i, x := range block {
					v[i] = float32(x)
				}
				flat = v
			case "i32":
				v := make([]int32, len(block))
				for i, x := range block {
					v[i] = int32(x)
				}
				flat = v
			default:
				return nil, nil, fmt.Errorf("dtype %q", a.DType)
			}
			b, err := client.BufferFromHost(pdevs[d], flat, dims)
			if err != nil {
				return nil, nil, err
			}
			args[d] = append(args[d], b)
		}
	}
	outs, err := exe.Execute(args)
	if err != nil {
		return nil, nil, fmt.Errorf("execute: %w", err)
	}
	defer func() {
		for _, l := range outs {
			for _, b := range l {
				b.Close()
			}
		}
	}()
	shape := c.JAX.Result.Shape
	outS, err := mesh.NewNamedSharding(m, specOf(c.Out))
	if err != nil {
		return nil, nil, err
	}
	idx, err := outS.DevicesIndicesMap(shape)
	if err != nil {
		return nil, nil, err
	}
	global := make([]float64, prod(shape))
	seen := make([]bool, len(global))
	for d := range pdevs {
		if len(outs[d]) != 1 {
			return nil, nil, fmt.Errorf("device %d returned %d outputs", ids[d], len(outs[d]))
		}
		host, err := outs[d][0].ToHost()
		if err != nil {
			return nil, nil, err
		}
		vals, err := floats(host)
		if err != nil {
			return nil, nil, err
		}
		pos := positions(shape, idx[d])
		if len(pos) != len(vals) {
			return nil, nil, fmt.Errorf("device %d: %d values for a block of %d", ids[d], len(vals), len(pos))
		}
		for i, p := range pos {
			if seen[p] && global[p] != vals[i] {
				return nil, nil, fmt.Errorf("replicas disagree at flat position %d: %v vs %v", p, global[p], vals[i])
			}
			global[p], seen[p] = vals[i], true
		}
	}
	return global, slices.Clone(shape), nil
}

func prod(xs []int) int {
	n := 1
	for _, x := range xs {
		n *= x
	}
	return n
}

// positions lists the row-major flat positions, in row-major block order, of
// the elements of a global array of shape inside index.
func positions(shape []int, index mesh.Index) []int {
	out := []int{0}
	for d, n := range shape {
		r := mesh.Range{Start: 0, Stop: n}
		if d < len(index) {
			r = index[d]
		}
		next := make([]int, 0, len(out)*r.Len())
		for _, p := range out {
			for i := r.Start; i < r.Stop; i++ {
				next = append(next, p*n+i)
			}
		}
		out = next
	}
	return out
}

// sliceIota returns the block of arange(prod(shape)).reshape(shape) at index.
func sliceIota(shape []int, index mesh.Index) ([]int, []int) {
	pos := positions(shape, index)
	dims := make([]int, len(shape))
	for d, n := range shape {
		dims[d] = n
		if d < len(index) {
			dims[d] = index[d].Len()
		}
	}
	return pos, dims
}

func floats(host any) ([]float64, error) {
	switch v := host.(type) {
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out, nil
	case []int32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected host type %T", host)
}

// TestLoweringNumeric runs each lowered program on 8 CPU devices of the real
// plugin and compares the numbers with JAX's, exactly (integer-valued data):
// first JAX's own module (checks xlamesh's runtime path: pjrt compile and
// execute, per-device blocks from mesh geometry), then xlamesh's lowering.
//
// On a client with fewer devices than the case's mesh, JAX's module (written
// for that mesh) cannot run: xlamesh's lowering alone runs, on the mesh of the
// same axes that fitShape makes for the devices there are, as its result is a
// global value; a case with a shard_map, whose result depends on the mesh,
// needs the mesh's devices (NeedDevices).
func TestLoweringNumeric(t *testing.T) {
	g := loadGolden[loweringCase](t, "lowering")
	report.noteGroup("lowering_numeric", "Each case runs twice on the pinned CPU plugin through `pjrt` (8 devices, device assignment = mesh order, inputs split by `DevicesIndicesMap`): "+
		"JAX's own lowered module (`jax module:` lines; checks xlamesh's runtime path) and xlamesh's lowering (`xlamesh module:` lines). Results must equal JAX's exactly.")
	for _, c := range g.Cases {
		if c.ExpectError {
			continue // no numbers: TestLowering compares the error
		}
		t.Run(c.Name, func(t *testing.T) {
			need, n := devicesNeeded(c.Mesh.Shape, c.Mesh.Devices), len(pjrttest.Client(t).Devices())
			if n < need {
				if strings.Contains(c.JAX.StableHLO, "sdy.manual_computation") || strings.Contains(c.JAX.StableHLO, "SPMDFullToShardShape") {
					pjrttest.NeedDevices(t, need)
				}
				c.Mesh = meshJSON{Shape: pjrttest.FitShape(c.Mesh.Shape, n), Names: c.Mesh.Names, Types: c.Mesh.Types}
			}
			var d []string
			check := func(label, text string) {
				got, shape, err := runModule(t, c, text)
				if err != nil {
					d = append(d, fmt.Sprintf("%s: %v", label, err))
					return
				}
				if !slices.Equal(shape, c.JAX.Result.Shape) || !slices.Equal(got, c.JAX.Result.Values) {
					d = append(d, fmt.Sprintf("%s: JAX %v %v, xlamesh %v %v", label, c.JAX.Result.Shape, c.JAX.Result.Values, shape, got))
				}
			}
			if n >= need {
				check("jax module", c.JAX.StableHLO)
			}
			if xlameshModule != nil {
				text, err := xlameshModule(c)
				if err != nil {
					d = append(d, fmt.Sprintf("xlamesh module: lowering: %v", err))
				} else {
					check("xlamesh module", text)
				}
			}
			report.check(t, "lowering_numeric", c.Name, d)
		})
	}
}
