package shardy

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImmutable(t *testing.T) {
	axes := []MeshAxis{{"x", 4}, {"y", 2}}
	ids := []int{1, 0, 2, 3, 4, 5, 6, 7}
	m := NewMesh(axes, ids)
	axes[0].Name, ids[0] = "changed", 9
	m.Axes()[1].Size = 7
	m.DeviceIDs()[1] = 9
	assert.Equal(t, `<["x"=4, "y"=2], device_ids=[1, 0, 2, 3, 4, 5, 6, 7]>`, m.String())

	refs := AxisRefs("x", "y")
	d := Closed(refs...)
	refs[0] = Axis("z")
	d.Axes()[1] = Axis("z")
	assert.Equal(t, `{"x", "y"}`, d.String())

	dims := []DimSharding{d, Open()}
	s := NewTensorSharding("mesh", dims...).WithReplicated(Axis("w"))
	dims[1] = Closed()
	s.Dims()[0] = Closed()
	s.Replicated()[0] = Axis("q")
	p := s.WithDims(Closed())
	assert.Equal(t, `#sdy.sharding<@mesh, [{"x", "y"}, {?}], replicated={"w"}>`, s.String())
	assert.Equal(t, `#sdy.sharding<@mesh, [{}], replicated={"w"}>`, p.String())
	assert.Equal(t, `{"x", "y"}`, s.Dim(0).String())
	assert.Equal(t, `{}`, s.Dim(5).String())
	assert.Equal(t, `#sdy.sharding<@other, [{"x", "y"}, {?}], replicated={"w"}>`, s.WithMeshName("other").String())

	pv := NewTensorShardingPerValue(s)
	pv.Shardings()[0] = p
	assert.True(t, pv.Sharding(0).Equal(s))
	assert.Equal(t, 1, pv.Len())
}

func TestEqual(t *testing.T) {
	a := MustParseTensorSharding(`#sdy.sharding<@mesh, [{"x"}p0, {?}], replicated={"y"}>`)
	assert.True(t, a.Equal(NewTensorSharding("mesh", Closed(Axis("x")).WithPriority(0), Open()).WithReplicated(Axis("y"))))
	assert.False(t, a.Equal(NewTensorSharding("mesh", Closed(Axis("x")), Open()).WithReplicated(Axis("y"))))
	assert.False(t, a.Equal(NewTensorSharding("mesh", Closed(Axis("x")).WithPriority(0), Closed()).WithReplicated(Axis("y"))))
	assert.False(t, a.Equal(a.WithMeshName("m")))
	u := NewTensorSharding("m").WithUnreduced(0, Axis("x"))
	assert.True(t, u.Equal(NewTensorSharding("m").WithUnreduced(ReduceSum, Axis("x"))))
	assert.False(t, u.Equal(NewTensorSharding("m").WithUnreduced(ReduceMax, Axis("x"))))
	assert.Equal(t, ReduceSum, u.Reduction())
	assert.Equal(t, "max", ReduceMax.String())
	assert.True(t, NewManualAxes("x").Equal(NewManualAxes("x")))
	assert.True(t, NewMeshOp("m", EmptyMesh()).Equal(NewMeshOp("m", EmptyMesh())))
}

func TestAccessors(t *testing.T) {
	m := MustParseMesh(`<["x"=4, "y"=2]>`)
	assert.Equal(t, []string{"x", "y"}, m.AxisNames())
	assert.Equal(t, []int{4, 2}, m.AxisSizes())
	assert.Equal(t, 8, m.Size())
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, m.Devices())
	assert.Nil(t, m.DeviceIDs())
	assert.Equal(t, 1, m.AxisIndex("y"))
	_, ok := m.AxisSize("z")
	assert.False(t, ok)
	assert.True(t, MaximalMesh(2).IsMaximal())
	assert.Equal(t, []int{2}, MaximalMesh(2).Devices())
	assert.True(t, EmptyMesh().IsEmpty())
	r := SubAxis("x", 2, 2)
	assert.Equal(t, 2, r.Size(m))
	assert.Equal(t, 4, Axis("x").Size(m))
	assert.True(t, r.IsSubAxis())
	assert.Equal(t, 2, r.PreSize())
	assert.Equal(t, 2, r.SubSize())
	s := MustParseTensorSharding(`<mesh<["x"=2]>, [{"x"}, {}]>`)
	im, inline := s.InlineMesh()
	assert.True(t, inline)
	assert.Equal(t, `<["x"=2]>`, im.String())
	assert.Equal(t, "", s.MeshName())
	assert.Equal(t, 2, s.Rank())
	assert.False(t, s.IsFullyReplicated())
	assert.True(t, Replicated("mesh", 3).IsFullyReplicated())
	assert.True(t, NewManualAxes("x", "y").Contains("y"))
	assert.Equal(t, []string{"x", "y"}, NewManualAxes("x", "y").Names())
	assert.Equal(t, 2, NewManualAxes("x", "y").Len())
	assert.Equal(t, "x", r.Name())
	d := Open(Axis("x")).WithPriority(1)
	assert.True(t, d.IsOpen())
	assert.False(t, d.IsClosed())
	assert.False(t, d.IsReplicated())
	_, has := d.WithoutPriority().Priority()
	assert.False(t, has)
	assert.Equal(t, `"x"=4`, MeshAxis{"x", 4}.String())
	assert.Equal(t, "mesh", NewMeshOp("mesh", m).Name())
	ref, err := ParseAxisRef(`"x":(2)2`)
	require.NoError(t, err)
	assert.Equal(t, SubAxis("x", 2, 2), ref)
	assert.True(t, NewTensorShardingPerValue().Sharding(3).Equal(TensorSharding{}))
	assert.Panics(t, func() { MustParseMesh("<") })
	assert.Panics(t, func() { MustParseTensorSharding("<") })
}

// Values are shared read-only across goroutines; run with -race.
func TestConcurrentUse(t *testing.T) {
	m := MustParseMesh(`<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>`)
	s := MustParseTensorSharding(`#sdy.sharding<@mesh, [{"y"}, {"x"}]>`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				g, err := s.GSPMD(m)
				require.NoError(t, err)
				assert.Equal(t, "{devices=[4,2]0,1,2,3,4,5,6,7}", g)
				assert.NoError(t, s.Validate(m, 2))
				assert.Equal(t, `<@mesh, [{"y"}, {"x"}]>`, s.Stripped())
				_ = s.SortedBy(m).Dims()
				_ = m.Devices()
			}
		}()
	}
	wg.Wait()
}
