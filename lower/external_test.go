package lower_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// TestModuleRegistry: a Module used only as the registry of a foreign module's meshes writes
// the entry shardings Function.ShardedArg writes and reports the mesh Build would.
func TestModuleRegistry(t *testing.T) {
	m := lower.NewModule("")
	a, err := m.EntryShardingAttr(ns("x", "y"), lower.NewShape(dtypes.Float32, 8, 2))
	require.NoError(t, err)
	require.Equal(t, "sdy.sharding", a.Name)
	require.Equal(t, `#sdy.sharding<@mesh, [{"x"}, {"y"}]>`, a.Value)
	ops := m.Meshes()
	require.Len(t, ops, 1)
	require.Equal(t, `sdy.mesh @mesh = <["x"=4, "y"=2]>`, ops[0].String())
	require.Equal(t, 8, m.NumPartitions())
	require.Equal(t, mesh42.DeviceIDs(), m.DeviceAssignment())

	_, err = m.EntryShardingAttr(ns("x"), lower.NewShape(dtypes.Float32, 2))
	require.ErrorIs(t, err, lower.ErrSharding)
	require.ErrorIs(t, err, mesh.ErrIndivisible)

	g := lower.NewModule("", lower.WithPartitioner(lower.GSPMD))
	a, err = g.EntryShardingAttr(ns("x"), lower.NewShape(dtypes.Float32, 8, 2))
	require.NoError(t, err)
	require.Equal(t, "mhlo.sharding", a.Name)
	require.Equal(t, `"{devices=[4,1,2]<=[8] last_tile_dim_replicate}"`, a.Value)
}

func TestNewProgram(t *testing.T) {
	f32 := lower.NewShape(dtypes.Float32, 8, 2)
	p, err := lower.NewProgram(lower.ProgramInfo{
		Text: "module {}", Partitioner: lower.GSPMD, NumPartitions: 8, DeviceAssignment: mesh42.DeviceIDs(),
		ArgShapes: []lower.Shape{f32, f32}, ResultShapes: []lower.Shape{f32},
		ArgShardings: []mesh.NamedSharding{ns("x"), {}},
	})
	require.NoError(t, err)
	require.Equal(t, "module {}", p.Text())
	require.Equal(t, lower.GSPMD, p.Partitioner())
	require.Equal(t, 8, p.NumPartitions())
	require.True(t, p.SaysNumPartitions())
	require.Equal(t, mesh42.DeviceIDs(), p.DeviceAssignment())
	require.Equal(t, []lower.Shape{f32, f32}, p.ArgShapes())
	s, ok := p.ArgSharding(0)
	require.True(t, ok)
	require.True(t, s.Equal(ns("x")))
	_, ok = p.ArgSharding(1)
	require.False(t, ok)
	_, ok = p.ResultSharding(0)
	require.False(t, ok)

	// A module that does not say its partition count counts as written for one device.
	p, err = lower.NewProgram(lower.ProgramInfo{Text: "module {}", Partitioner: lower.Shardy})
	require.NoError(t, err)
	require.Equal(t, 1, p.NumPartitions())
	require.False(t, p.SaysNumPartitions())

	for _, tc := range []struct {
		name string
		info lower.ProgramInfo
		err  error
		msg  string
	}{
		{"sharding count", lower.ProgramInfo{ArgShapes: []lower.Shape{f32}, ArgShardings: []mesh.NamedSharding{{}, {}}},
			lower.ErrSharding, "2 argument shardings for 1 arguments"},
		{"negative partitions", lower.ProgramInfo{NumPartitions: -1}, lower.ErrMeshMismatch, "-1 partitions"},
		{"assignment size", lower.ProgramInfo{NumPartitions: 4, DeviceAssignment: []int{0, 1}}, lower.ErrMeshMismatch, "device assignment [0 1] for 4 partitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lower.NewProgram(tc.info)
			require.ErrorIs(t, err, tc.err)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
