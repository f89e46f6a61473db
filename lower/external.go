package lower

import (
	"fmt"
	"slices"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shardy"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// What package lower/wrap needs of lower to annotate modules written elsewhere: a Module as
// the registry of their meshes and entry shardings, and a Program for their text.

// EntryShardingAttr returns the attribute that gives an @main argument or result of the given
// shape the sharding s, as Function.ShardedArg and Function.ShardResults write it (`sdy.sharding`
// with Shardy, `mhlo.sharding` with GSPMD; dimensions s leaves unconstrained stay open), and
// adds s's mesh to the module's meshes. It is for annotating text written elsewhere (package
// lower/wrap). The sharding must fit the shape: an error wraps ErrSharding, ErrMeshMismatch
// (a mesh that does not fit the module's) or ErrPartitioner.
func (m *Module) EntryShardingAttr(s mesh.NamedSharding, shape Shape) (stablehlo.Attr, error) {
	return m.entryShardingAttr(s, shape)
}

// Meshes returns the module's `sdy.mesh` symbols, in the order Build writes them at the top of
// a Shardy module.
func (m *Module) Meshes() []shardy.MeshOp {
	ops := make([]shardy.MeshOp, len(m.meshes))
	for i, s := range m.meshes {
		ops[i] = s.decl
	}
	return ops
}

// NumPartitions returns the partition count Build writes as mhlo.num_partitions: the device
// count of the module's mesh (1 without one).
func (m *Module) NumPartitions() int { return m.numPartitions() }

// DeviceAssignment returns the device ids, in mesh order, of the first concrete mesh the
// module's shardings used, or nil (see Program.DeviceAssignment).
func (m *Module) DeviceAssignment() []int { return slices.Clone(m.assignment) }

// ProgramInfo is what a Program reports of a module written elsewhere (see NewProgram).
type ProgramInfo struct {
	// Text is the module's MLIR text.
	Text string
	// Partitioner is the partitioner the text's shardings are written for.
	Partitioner Partitioner
	// NumPartitions is the module's mhlo.num_partitions, or 0 when the text does not say it:
	// the Program then reports 1 and SaysNumPartitions false.
	NumPartitions int
	// DeviceAssignment is the device ids, in mesh order, of the module's mesh (one per
	// partition), or nil when any devices fit.
	DeviceAssignment []int
	// ArgShapes and ResultShapes are @main's argument and result types.
	ArgShapes, ResultShapes []Shape
	// ArgShardings and ResultShardings are the shardings given to @main's arguments and
	// results, a zero NamedSharding where none was; nil when none was given to any.
	ArgShardings, ResultShardings []mesh.NamedSharding
}

// NewProgram returns the Program of a module written elsewhere, such as one jax.export wrote,
// from what its text says; package lower/wrap reads and annotates such text. Modules built here
// get theirs from Module.Build. An error wraps ErrSharding (a sharding count other than the
// argument or result count) or ErrMeshMismatch (a negative partition count, or a device
// assignment of another size).
func NewProgram(info ProgramInfo) (*Program, error) {
	n := info.NumPartitions
	if n < 0 {
		return nil, fmt.Errorf("lower: program: %w: %d partitions", ErrMeshMismatch, n)
	}
	if a := info.DeviceAssignment; a != nil && len(a) != max(n, 1) {
		return nil, fmt.Errorf("lower: program: %w: device assignment %v for %d partitions", ErrMeshMismatch, a, max(n, 1))
	}
	p := &Program{
		text:             info.Text,
		partitioner:      info.Partitioner,
		numPartitions:    max(n, 1),
		partitionsUnsaid: n == 0,
		assignment:       slices.Clone(info.DeviceAssignment),
		args:             slices.Clone(info.ArgShapes),
		results:          slices.Clone(info.ResultShapes),
	}
	var err error
	if p.argSh, err = shardingPtrs("argument", info.ArgShardings, len(p.args)); err != nil {
		return nil, err
	}
	if p.resSh, err = shardingPtrs("result", info.ResultShardings, len(p.results)); err != nil {
		return nil, err
	}
	return p, nil
}

// shardingPtrs returns one entry per value: the sharding given, or nil for a zero one.
func shardingPtrs(kind string, shardings []mesh.NamedSharding, n int) ([]*mesh.NamedSharding, error) {
	if shardings != nil && len(shardings) != n {
		return nil, fmt.Errorf("lower: program: %w: %d %s shardings for %d %ss", ErrSharding, len(shardings), kind, n, kind)
	}
	out := make([]*mesh.NamedSharding, n)
	for i, s := range shardings {
		if s.Key() != "" {
			out[i] = &s
		}
	}
	return out, nil
}
