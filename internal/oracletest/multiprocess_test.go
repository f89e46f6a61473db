package oracletest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
)

func init() { kinds["process_data"] = mesh.ErrProcessData }

// multiprocessCase is a mesh over simulated processes (multiprocess.json): what each process
// holds, loads and gathers, as JAX's process-local helpers compute it.
type multiprocessCase struct {
	caseHead
	MeshShape []int    `json:"mesh_shape"`
	Names     []string `json:"names"`
	Spec      []any    `json:"spec"`
	Shape     []int    `json:"shape"`
	Process   int      `json:"process"` // error cases: the process whose local data is wrong
	Local     []int    `json:"local"`   // error cases: that data's shape
	JAX       struct {
		MeshDevices []tpuDeviceJSON `json:"mesh_devices"`
		Processes   []processView   `json:"processes"`
		Error       *jaxError       `json:"error,omitempty"`
	} `json:"jax"`
}

// processView is one process's part of a case's golden.
type processView struct {
	Process int `json:"process"`
	// Holds: [device id, [[start, stop], ...], replica id] per addressable device, mesh order.
	Holds [][]json.RawMessage `json:"holds"`
	// Counts: get_process_index_and_count's count per dimension; null where non-uniform.
	Counts []*int `json:"counts"`
	// LocalShape: num_addressable_indices per dimension.
	LocalShape []int `json:"local_shape"`
	// Inferred: local_to_global_shape of LocalShape; null where non-uniform.
	Inferred []*int `json:"inferred_global_shape"`
	// Builds: [device id, flat positions in the local array] per addressable device: what
	// make_array_from_process_local_data gives each device from arange(local shape).
	Builds [][]json.RawMessage `json:"builds"`
}

// TestMultiprocess compares mesh's process-local bookkeeping with JAX's for meshes over 2, 4
// and 8 simulated processes.
func TestMultiprocess(t *testing.T) {
	const group = "multiprocess"
	g := loadGolden[multiprocessCase](t, group)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var d []string
			s, err := c.sharding()
			if err != nil {
				t.Fatalf("%s: building the case's sharding: %v", c.Name, err)
			}
			if c.ExpectError {
				_, err := s.ProcessLocalShards(c.Shape, c.Local, c.Process)
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else {
				for _, v := range c.JAX.Processes {
					d = append(d, compareProcess(s, c.Shape, v)...)
				}
			}
			report.check(t, group, c.Name, d)
		})
	}
}

// sharding builds the case's mesh from the simulated devices, in mesh order, and its sharding.
func (c multiprocessCase) sharding() (mesh.NamedSharding, error) {
	devs := make([]mesh.Device, len(c.JAX.MeshDevices))
	for i, dj := range c.JAX.MeshDevices {
		devs[i] = mesh.SimDevice{Id: dj.ID, Process: dj.ProcessIndex, PlatformName: dj.Platform, KindName: dj.Kind,
			Coordinates: dj.Coords, Core: dj.CoreOnChip, Slice: dj.SliceIndex}
	}
	m, err := mesh.New(devs, c.MeshShape, c.Names...)
	if err != nil {
		return mesh.NamedSharding{}, err
	}
	return mesh.NewNamedSharding(m, specOf(c.Spec))
}

// compareProcess checks one process's view.
func compareProcess(s mesh.NamedSharding, shape []int, v processView) []string {
	var d []string
	p := v.Process
	at := func(what string) string { return fmt.Sprintf("process %d: %s", p, what) }

	shards, err := s.AddressableShards(shape, p)
	if err != nil {
		return []string{at("addressable shards: " + err.Error())}
	}
	var wantHolds, gotHolds []string
	for _, h := range v.Holds {
		wantHolds = append(wantHolds, compact(h))
	}
	for _, sh := range shards {
		gotHolds = append(gotHolds, fmt.Sprintf("[%d,%s,%d]", sh.Device.ID(), rangesJSON(sh.Index), sh.ReplicaID))
	}
	eq(&d, at("holds [device, index, replica id]"), wantHolds, gotHolds)

	var wantCounts, gotCounts []string
	for dim, n := range v.Counts {
		wantCounts = append(wantCounts, intOrNone(n))
		_, count, err := s.ProcessIndexAndCount(dim, len(shape), p)
		switch {
		case errors.Is(err, mesh.ErrNonUniform):
			gotCounts = append(gotCounts, "None")
		case err != nil:
			gotCounts = append(gotCounts, "error: "+err.Error())
		default:
			gotCounts = append(gotCounts, strconv.Itoa(count))
		}
	}
	eq(&d, at("process count per dimension"), wantCounts, gotCounts)

	local, err := s.ProcessLocalShape(shape, p)
	if err != nil {
		return append(d, at("process-local shape: "+err.Error()))
	}
	eq(&d, at("process-local shape"), v.LocalShape, local)

	var want []string
	unknown := false
	for _, n := range v.Inferred {
		want = append(want, intOrNone(n))
		unknown = unknown || n == nil
	}
	inferred, err := s.LocalToGlobalShape(local, p)
	switch {
	case unknown:
		partial := "global_shape=(" + strings.Join(want, ", ") + ")"
		if !errors.Is(err, mesh.ErrNonUniform) || !strings.Contains(err.Error(), partial) {
			d = append(d, fmt.Sprintf("%s: JAX infers %s, xlamesh: %v, %v", at("inferred global shape"), partial, inferred, err))
		}
	case err != nil:
		d = append(d, fmt.Sprintf("%s: JAX %v, xlamesh: %v", at("inferred global shape"), want, err))
	default:
		var got []string
		for _, n := range inferred {
			got = append(got, strconv.Itoa(n))
		}
		eq(&d, at("inferred global shape"), want, got)
	}

	ls, err := s.ProcessLocalShards(shape, local, p)
	if err != nil {
		return append(d, at("process-local shards: "+err.Error()))
	}
	var wantBuilds, gotBuilds []string
	for _, b := range v.Builds {
		wantBuilds = append(wantBuilds, compact(b))
	}
	for _, sh := range ls {
		pos, _ := json.Marshal(flatPositions(sh.Local, local))
		gotBuilds = append(gotBuilds, fmt.Sprintf("[%d,%s]", sh.Device.ID(), pos))
	}
	eq(&d, at("builds [device, local positions]"), wantBuilds, gotBuilds)
	return d
}

// flatPositions lists, row-major over idx, the flat positions of its elements in an array of
// the given shape.
func flatPositions(idx mesh.Index, shape []int) []int {
	out := []int{}
	coords := make([]int, len(idx))
	for i, r := range idx {
		if r.Len() == 0 {
			return out
		}
		coords[i] = r.Start
	}
	for {
		flat := 0
		for i, c := range coords {
			flat = flat*shape[i] + c
		}
		out = append(out, flat)
		i := len(coords) - 1
		for ; i >= 0; i-- {
			coords[i]++
			if coords[i] < idx[i].Stop {
				break
			}
			coords[i] = idx[i].Start
		}
		if i < 0 {
			return out
		}
	}
}

// compact re-encodes a golden JSON list without spaces, the form the comparisons use.
func compact(parts []json.RawMessage) string {
	b, _ := json.Marshal(parts)
	return string(b)
}

func rangesJSON(idx mesh.Index) string {
	parts := make([]string, len(idx))
	for i, r := range idx {
		parts[i] = fmt.Sprintf("[%d,%d]", r.Start, r.Stop)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func intOrNone(n *int) string {
	if n == nil {
		return "None"
	}
	return strconv.Itoa(*n)
}
