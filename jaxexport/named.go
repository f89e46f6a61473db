package jaxexport

import (
	"fmt"

	"github.com/xlamesh/xlamesh/mesh"
)

// Field ids of the tables JAX 0.9 and later write for named shardings
// (jax/_src/export/serialization.fbs): Sharding.named_sharding (version 6 on), the
// NamedSharding, AbstractMesh and PartitionSpec tables, and the Exported fields that share them
// (version 10 on).
const (
	fShardingNamed = 2 // Sharding.named_sharding: NamedSharding

	fNamedMesh    = 0 // NamedSharding.mesh: AbstractMesh (a copy, before version 10)
	fNamedSpec    = 1 // NamedSharding.spec: PartitionSpec
	fNamedMemory  = 2 // NamedSharding.memory_kind: string
	fNamedMeshIdx = 3 // NamedSharding.abstract_mesh_idx: uint32 into unique_abstract_meshes

	fMeshSizes = 0 // AbstractMesh.axis_sizes: [uint32]
	fMeshNames = 1 // AbstractMesh.axis_names: [string]
	fMeshTypes = 2 // AbstractMesh.axis_types: [AxisType] (0 missing, 1 auto, 2 explicit, 3 manual)

	fSpecPartitions = 0 // PartitionSpec.partitions: [PartitionSpecOneAxis]
	fSpecReduced    = 1 // PartitionSpec.reduced: [string]
	fSpecUnreduced  = 2 // PartitionSpec.unreduced: [string]
	fOneAxisAxes    = 0 // PartitionSpecOneAxis.axes: [string]

	fUniqueMeshes    = 20 // Exported.unique_abstract_meshes: [AbstractMesh] (version 10 on)
	fUniqueShardings = 21 // Exported.unique_named_shardings: [NamedSharding] (version 10 on)
	fJaxVersion      = 26 // Exported.jax_version: string (version 12 on)
)

// maxMeshAxes bounds the axes of one abstract mesh.
const maxMeshAxes = 64

// namedReader reads the NamedSharding tables of one artifact, with the shared abstract meshes
// of version 10 and later.
type namedReader struct {
	r      *buffer
	meshes []mesh.Abstract // unique_abstract_meshes, read once
}

func newNamedReader(r *buffer, root table) (*namedReader, error) {
	n := &namedReader{r: r}
	r.field, r.index = "unique_abstract_meshes", -1
	v, _, err := r.vec(root, fUniqueMeshes, 4)
	if err != nil {
		return nil, err
	}
	for i := range v.n {
		r.field, r.index = "unique_abstract_meshes", int(i)
		t, err := r.tableAt(v.data+4*i, "AbstractMesh")
		if err != nil {
			return nil, err
		}
		m, err := n.mesh(t)
		if err != nil {
			return nil, err
		}
		n.meshes = append(n.meshes, m)
	}
	r.index = -1
	return n, nil
}

// mesh reads an AbstractMesh table.
func (n *namedReader) mesh(t table) (mesh.Abstract, error) {
	r := n.r
	sizesV, _, err := r.vec(t, fMeshSizes, 4)
	if err != nil {
		return mesh.Abstract{}, err
	}
	namesV, _, err := r.vec(t, fMeshNames, 4)
	if err != nil {
		return mesh.Abstract{}, err
	}
	typesV, hasTypes, err := r.vec(t, fMeshTypes, 1)
	if err != nil {
		return mesh.Abstract{}, err
	}
	if sizesV.n != namesV.n || hasTypes && typesV.n != sizesV.n || sizesV.n > maxMeshAxes {
		return mesh.Abstract{}, r.fail("abstract mesh with %d sizes, %d names, %d axis types (at most %d axes)",
			sizesV.n, namesV.n, typesV.n, maxMeshAxes)
	}
	sizes := r.uint32s(sizesV)
	names := make([]string, namesV.n)
	for i := range namesV.n {
		if names[i], err = r.strAt(namesV.data + 4*i); err != nil {
			return mesh.Abstract{}, err
		}
	}
	var types []mesh.AxisType
	if hasTypes {
		for i := range typesV.n {
			switch k := r.b[typesV.data+i]; k {
			case 0, 1:
				types = append(types, mesh.Auto)
			case 2:
				types = append(types, mesh.Explicit)
			case 3:
				types = append(types, mesh.Manual)
			default:
				return mesh.Abstract{}, r.fail("axis %q has unknown axis type %d", names[i], k)
			}
		}
	}
	a, err := mesh.NewAbstract(sizes, names, types...)
	if err != nil {
		return mesh.Abstract{}, r.fail("%v", err)
	}
	return a, nil
}

// strings reads a vector of strings.
func (n *namedReader) strings(t table, slot int) ([]string, error) {
	v, _, err := n.r.vec(t, slot, 4)
	if err != nil {
		return nil, err
	}
	out := make([]string, v.n)
	for i := range v.n {
		if out[i], err = n.r.strAt(v.data + 4*i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sharding reads the NamedSharding table at the offset at: its mesh (its own copy, or an
// index into unique_abstract_meshes), its spec and its memory kind.
func (n *namedReader) sharding(at uint64) (Sharding, error) {
	r := n.r
	t, err := r.tableAt(at, "NamedSharding")
	if err != nil {
		return Sharding{}, err
	}
	var m mesh.Abstract
	if len(n.meshes) > 0 {
		k, err := r.uint32(t, fNamedMeshIdx, 0)
		if err != nil {
			return Sharding{}, err
		}
		if int(k) >= len(n.meshes) {
			return Sharding{}, r.fail("abstract_mesh_idx %d; unique_abstract_meshes has %d", k, len(n.meshes))
		}
		m = n.meshes[k]
	} else {
		mt, ok, err := r.subtable(t, fNamedMesh, "AbstractMesh")
		if err != nil {
			return Sharding{}, err
		}
		if !ok {
			return Sharding{}, r.fail("a named sharding without its mesh")
		}
		if m, err = n.mesh(mt); err != nil {
			return Sharding{}, err
		}
	}
	st, ok, err := r.subtable(t, fNamedSpec, "PartitionSpec")
	if err != nil {
		return Sharding{}, err
	}
	var entries []any
	if ok {
		for _, f := range []struct {
			slot int
			name string
		}{{fSpecReduced, "reduced"}, {fSpecUnreduced, "unreduced"}} {
			axes, err := n.strings(st, f.slot)
			if err != nil {
				return Sharding{}, err
			}
			if len(axes) > 0 {
				return Sharding{}, &Error{Kind: ErrUnsupported, Field: r.field, Index: r.index,
					Msg: fmt.Sprintf("a partition spec with %s axes %q", f.name, axes)}
			}
		}
		pv, _, err := r.vec(st, fSpecPartitions, 4)
		if err != nil {
			return Sharding{}, err
		}
		if pv.n > maxMeshAxes*4 {
			return Sharding{}, r.fail("a partition spec of %d entries", pv.n)
		}
		for i := range pv.n {
			ot, err := r.tableAt(pv.data+4*i, "PartitionSpecOneAxis")
			if err != nil {
				return Sharding{}, err
			}
			axes, err := n.strings(ot, fOneAxisAxes)
			if err != nil {
				return Sharding{}, err
			}
			switch len(axes) {
			case 0:
				entries = append(entries, nil)
			case 1:
				entries = append(entries, axes[0])
			default:
				entries = append(entries, axes)
			}
		}
	}
	spec, err := mesh.NewSpec(entries...)
	if err != nil {
		return Sharding{}, r.fail("%v", err)
	}
	ns, err := mesh.NewAbstractSharding(m, spec)
	if err != nil {
		return Sharding{}, r.fail("%v", err)
	}
	memory, _, err := r.str(t, fNamedMemory)
	if err != nil {
		return Sharding{}, err
	}
	return Sharding{named: ns, hasNamed: true, memoryKind: memory}, nil
}
