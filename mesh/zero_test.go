package mesh

import (
	"io"
	"testing"
)

// TestZeroValuesDoNotPanic calls every query on zero values and empty
// inputs: each must return an error or a harmless value, never panic.
func TestZeroValuesDoNotPanic(t *testing.T) {
	var m Mesh
	var a Abstract
	var s NamedSharding
	var p PartitionSpec
	var d Dim
	_, _ = m.Device()
	_, _ = m.Device(0)
	_, _ = m.Coords(0)
	_, _ = m.LocalMesh(0)
	_, _ = m.WithAxisTypes()
	_ = m.LocalDevices(0)
	_ = m.IsMultiProcess()
	_ = m.GoString()
	_ = m.Shape()
	_, _ = a.WithAxisTypes()
	_, _ = a.AxisSize("x")
	_ = a.String()
	_ = p.String()
	_ = p.Dim(0)
	_ = d.String()
	_ = d.Axes()
	_ = s.String()
	_, _ = s.ShardShape(nil)
	_, _ = s.PositionIndices([]int{2})
	_, _ = s.ReplicaIDsFor([]int{2})
	_, _ = s.AddressableShards([]int{2}, 0)
	_, _ = s.DevicesHolding([]int{2}, Index{{0, 2}})
	_ = s.Tiling(-1)
	if err := Visualize(io.Discard, s, []int{2}); err == nil {
		t.Errorf("Visualize(zero sharding) succeeded")
	}
	if _, err := Create(nil, nil, nil); err != nil {
		t.Errorf("Create(empty) = %v", err)
	}
	if _, err := Create(devs(0), nil, nil); err == nil {
		t.Errorf("Create(1 device, no axes) succeeded")
	}
	if _, err := Create(nil, []int{2}, []string{"x"}); err == nil {
		t.Errorf("Create(no devices) succeeded")
	}
	if _, err := CreateHybrid(nil, []int{-1}, []int{-1}, []string{"x"}); err == nil {
		t.Errorf("CreateHybrid(negative) succeeded")
	}
	if _, err := NewNamedSharding(m, P()); err == nil {
		t.Errorf("NewNamedSharding(empty mesh) succeeded")
	}
	if _, err := NewAbstractSharding(a, P()); err == nil {
		t.Errorf("NewAbstractSharding(empty) succeeded")
	}
	if _, _, err := LogicalConstraint(nil, nil, 9); err == nil {
		t.Errorf("LogicalConstraint(bad fallback) succeeded")
	}
}
