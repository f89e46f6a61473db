package oracletest

import (
	"fmt"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
)

// gspmdText is shardy.GSPMD, set by gspmd_test.go; nil leaves the GSPMD text
// uncompared.
var gspmdText func(s mesh.NamedSharding, rank int) (string, error)

type shardingCase struct {
	caseHead
	Mesh  meshJSON `json:"mesh"`
	Spec  []any    `json:"spec"`
	Shape []int    `json:"shape"`
	JAX   struct {
		SpecRepr          string `json:"spec_repr"`
		ShardShape        []int  `json:"shard_shape"`
		IsFullyReplicated bool   `json:"is_fully_replicated"`
		HLOSharding       string `json:"hlo_sharding"`
		Devices           []struct {
			ID        int     `json:"id"`
			Index     [][]int `json:"index"`
			ReplicaID int     `json:"replica_id"`
		} `json:"devices"`
		Error *jaxError `json:"error,omitempty"`
	} `json:"jax"`
}

// shardingErr runs xlamesh's checks in JAX's order: construction, then
// rank and divisibility against the shape.
func shardingErr(m mesh.Mesh, c shardingCase) (mesh.NamedSharding, error) {
	s, err := mesh.NewNamedSharding(m, specOf(c.Spec))
	if err != nil {
		return s, err
	}
	if err := s.CheckShape(c.Shape); err != nil {
		return s, err
	}
	_, err = s.DevicesIndicesMap(c.Shape)
	return s, err
}

// TestSharding compares NamedSharding geometry with JAX's
// devices_indices_map, shard_shape, addressable_shards' replica ids (ReplicaIDsFor),
// is_fully_replicated and the GSPMD sharding text (shardy.GSPMD).
func TestSharding(t *testing.T) {
	g := loadGolden[shardingCase](t, "sharding")
	report.noteGroup("sharding", "Per case: the mesh (device order included), spec and array shape; compared: each device's index (as [start, stop) per dim, JAX's slice(None) resolved to the full range) in mesh order, shard shape, replica ids of the addressable shards, is_fully_replicated, the spec's text, and `shardy.GSPMD` against JAX's `_to_xla_hlo_sharding`. Errors: `NewNamedSharding`, then `CheckShape`, then `DevicesIndicesMap`, against the first JAX error of construction, `check_compatible_aval`, `shard_shape`, `devices_indices_map`, `device_put`.")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			m, err := buildMesh(c.Mesh)
			if err != nil {
				report.check(t, "sharding", c.Name, []string{fmt.Sprintf("mesh: %v", err)})
				return
			}
			s, err := shardingErr(m, c)
			var d []string
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else if d = okDiffs(c.JAX, err); err == nil {
				d = compareGeometry(c, m, s)
			}
			report.check(t, "sharding", c.Name, d)
		})
	}
}

func compareGeometry(c shardingCase, m mesh.Mesh, s mesh.NamedSharding) []string {
	var d []string
	eq1(&d, "spec", pyRepr(c.JAX.SpecRepr), s.Spec().String())
	ss, err := s.ShardShape(c.Shape)
	if err != nil {
		d = append(d, fmt.Sprintf("ShardShape: %v", err))
	} else {
		eq(&d, "shard shape", c.JAX.ShardShape, ss)
	}
	eq1(&d, "is_fully_replicated", c.JAX.IsFullyReplicated, s.IsFullyReplicated())
	var wantIDs, wantReplicas []int
	var wantIdx []string
	for _, dv := range c.JAX.Devices {
		wantIDs = append(wantIDs, dv.ID)
		wantReplicas = append(wantReplicas, dv.ReplicaID)
		var idx mesh.Index
		for _, r := range dv.Index {
			idx = append(idx, mesh.Range{Start: r[0], Stop: r[1]})
		}
		wantIdx = append(wantIdx, idx.String())
	}
	eq(&d, "device order", wantIDs, m.DeviceIDs())
	if idx, err := s.DevicesIndicesMap(c.Shape); err != nil {
		d = append(d, fmt.Sprintf("DevicesIndicesMap: %v", err))
	} else {
		var got []string
		for _, i := range idx {
			got = append(got, i.String())
		}
		eq(&d, "indices", wantIdx, got)
	}
	if r, err := s.ReplicaIDsFor(c.Shape); err != nil {
		d = append(d, fmt.Sprintf("ReplicaIDsFor: %v", err))
	} else {
		eq(&d, "replica ids", wantReplicas, r)
	}
	if gspmdText == nil {
		return d
	}
	if gs, err := gspmdText(s, len(c.Shape)); err != nil {
		d = append(d, fmt.Sprintf("shardy.GSPMD: %v", err))
	} else {
		eq1(&d, "GSPMD text", c.JAX.HLOSharding, gs)
	}
	return d
}
