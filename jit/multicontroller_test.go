package jit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// multicontrollerGolden is testdata/oracle/multicontroller.json, written by
// tools/oracle/multicontroller.py: JAX 0.8.1 in 2 processes over gloo.
type multicontrollerGolden struct {
	Processes []struct {
		Process             int   `json:"process"`
		AddressablePosition []int `json:"addressable_positions"`
		Results             []struct {
			Shape  []int `json:"shape"`
			Spec   []any `json:"spec"`
			Shards []struct {
				Position int       `json:"position"`
				Index    [][2]int  `json:"index"`
				Data     []float32 `json:"data"`
			} `json:"shards"`
			Allgather []float32 `json:"allgather"`
		} `json:"results"`
	} `json:"processes"`
}

// globalBody is the golden's function: x*2+1 (P("proc")), sum(x*x) and x^T x (replicated).
func globalBody(f *lower.Function, a []lower.Value) []lower.Value {
	x := a[0]
	return []lower.Value{
		f.Add(f.Mul(x, f.Constant(2)), f.Constant(1)),
		f.Sum(f.Mul(x, x)),
		f.MatMul(f.Transpose(x, 1, 0), x),
	}
}

var globalOutSpecs = jit.OutSpecs(mesh.P("proc"), mesh.P(), mesh.P())

// TestMultiControllerCall is a jitted call over a mesh of 2 processes (2 CPU devices each), held
// against JAX in 2 processes over gloo. Each process builds x from its own rows
// (FromProcessLocalData) and calls the Function on the global array: the global program reaches
// the plugin with the global device assignment, and the CPU plugin refuses it, typed. What the
// call would leave in each process, its shards of each global result, is then checked as far as
// the CPU plugins allow: the same program on one process's 4-device mesh gives the global values;
// each process places its part of them on its devices under the results' global shardings, and
// both the shards (device position, index, values) and ProcessAllgather of them match JAX's.
func TestMultiControllerCall(t *testing.T) {
	checkNoLeak(t)
	raw, err := os.ReadFile("../testdata/oracle/multicontroller.json")
	require.NoError(t, err)
	var golden multicontrollerGolden
	require.NoError(t, json.Unmarshal(raw, &golden))
	require.Len(t, golden.Processes, 2)
	global := arange[float32](32) // [8, 4]

	// The global values: the same program on a 4-device mesh of one process (fewer devices where
	// the shared client has fewer; the values are the same).
	one := pjrttest.Client(t)
	m1 := fitMesh(t, jit.Devices(one), []int{2, 2}, "proc", "x")
	x1, err := jit.Put(one, global, []int{8, 4}, mesh.MustNamedSharding(m1, mesh.P("proc")))
	require.NoError(t, err)
	defer x1.Close()
	ref := jit.New("multicontroller_reference", globalBody, globalOutSpecs)
	defer ref.Close()
	outs1, err := ref.Call(one, x1)
	require.NoError(t, err)
	values := make([][]float32, len(outs1))
	for r, o := range outs1 {
		v, err := o.ToHost()
		require.NoError(t, err)
		values[r] = v.([]float32)
		require.NoError(t, o.Close())
	}

	procs := openProcesses(t, 2)
	f := jit.New("multicontroller_call", globalBody, globalOutSpecs)
	defer f.Close()
	inProcesses(t, procs, func(p int, pr process) error {
		want := golden.Processes[p]
		m, err := mesh.New(jit.Devices(pr.client), []int{2, 2}, "proc", "x")
		if err != nil {
			return err
		}
		x, err := jit.FromProcessLocalData(pr.client, mesh.MustNamedSharding(m, mesh.P("proc")), global[p*16:(p+1)*16], []int{4, 4}, nil)
		if err != nil {
			return err
		}
		defer x.Close()

		_, err = f.Call(pr.client, x)
		if !errors.Is(err, pjrt.ErrMultiController) {
			return fmt.Errorf("call over 2 processes: %v, want pjrt.ErrMultiController", err)
		}
		var na *pjrt.NotAddressableError
		if !errors.As(err, &na) || !slices.Equal(na.Devices, m.DeviceIDs()[2-2*p:4-2*p]) {
			return fmt.Errorf("call over 2 processes: %v: not the other process's devices", err)
		}
		wantMsg := fmt.Sprintf("jit: multicontroller_call: pjrt: compile: multi-controller compile refused by the plugin: "+
			"the plugin pjrt_c_api_cpu_plugin.so cannot compile for devices of other processes: devices %v of the device "+
			"assignment are not addressable from process %d: pjrt: compile: Multiprocess computations aren't implemented "+
			"on the CPU backend. (InvalidArgument)", na.Devices, p)
		if err.Error() != wantMsg {
			return fmt.Errorf("error text\n got %s\nwant %s", err, wantMsg)
		}

		for r, res := range want.Results {
			s, err := mesh.NewNamedSharding(m, mesh.P(res.Spec...)) // JAX's spec: axis names and nulls
			if err != nil {
				return err
			}
			if declared := []mesh.PartitionSpec{mesh.P("proc"), mesh.P(), mesh.P()}[r]; s.Spec().String() != declared.String() {
				return fmt.Errorf("result %d: JAX's sharding %v, the Function declares %v", r, s.Spec(), declared)
			}
			// This process's part of the global result, as its shards would hold it.
			a, err := jit.FromCallback(pr.client, res.Shape, x.DType(), s, func(idx mesh.Index) (any, error) {
				return sliceOf(values[r], res.Shape, idx), nil
			})
			if err != nil {
				return err
			}
			defer a.Close()
			shards := a.AddressableShards()
			if len(shards) != len(res.Shards) {
				return fmt.Errorf("result %d: %d shards, JAX %d", r, len(shards), len(res.Shards))
			}
			for i, sh := range shards {
				js := res.Shards[i]
				if pos := slices.Index(m.DeviceIDs(), sh.Device.ID()); pos != js.Position {
					return fmt.Errorf("result %d shard %d: mesh position %d, JAX %d", r, i, pos, js.Position)
				}
				for d, rg := range sh.Index {
					if rg.Start != js.Index[d][0] || rg.Stop != js.Index[d][1] {
						return fmt.Errorf("result %d shard %d: index %v, JAX %v", r, i, sh.Index, js.Index)
					}
				}
				got, err := sh.Data.ToHost()
				if err != nil {
					return err
				}
				if !slices.Equal(got.([]float32), js.Data) {
					return fmt.Errorf("result %d shard %d: %v, JAX %v", r, i, got, js.Data)
				}
			}
			all, shape, err := jit.ProcessAllgather(context.Background(), pr.job, a, true)
			if err != nil {
				return err
			}
			if !slices.Equal(shape, res.Shape) || !slices.Equal(all.([]float32), res.Allgather) {
				return fmt.Errorf("result %d: allgather %v %v, JAX %v %v", r, shape, all, res.Shape, res.Allgather)
			}
		}
		return nil
	})
}

// sliceOf returns the block idx of a row-major array of the given shape (rank 0, 1 or 2).
func sliceOf(flat []float32, shape []int, idx mesh.Index) []float32 {
	switch len(shape) {
	case 0:
		return slices.Clone(flat)
	case 1:
		return slices.Clone(flat[idx[0].Start:idx[0].Stop])
	}
	var out []float32
	for i := idx[0].Start; i < idx[0].Stop; i++ {
		out = append(out, flat[i*shape[1]+idx[1].Start:i*shape[1]+idx[1].Stop]...)
	}
	return out
}
