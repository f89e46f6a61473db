// Package mesh is the model a user of xlamesh thinks in, after JAX: a Mesh
// of devices with named axes, a PartitionSpec saying which mesh axes split
// each array dimension, and a NamedSharding pairing the two, with the shard
// geometry it implies.
//
// # Place in the data flow
//
// Devices come from a PJRT client (package pjrt implements Device) or, in
// tests, from SimDevices. New arranges them into a Mesh; Create does the same
// the way JAX's mesh_utils.create_device_mesh orders them. A NamedSharding
// built from a Mesh (or from its device-free Abstract form) goes on to
// package shardy, which prints it as Shardy attributes, and to lower, which
// annotates StableHLO with it. Lowering depends only on the Abstract mesh;
// the device ids in mesh order become the compile-time device assignment.
//
// # Geometry
//
// For an array of global shape S, DevicesIndicesMap gives each device (in
// mesh order) the [start, stop) range it holds of every dimension. A
// dimension mapped to axes (a1, ..., ak) is split into the product of their
// sizes, and the first axis is major. Replicated dimensions hold the full
// range. ReplicaIDs numbers the devices holding the same index in mesh
// order. The values match JAX's devices_indices_map and replica_id.
//
// # Creating meshes
//
// New takes devices in the order given. Create orders them first, as JAX's
// mesh_utils.create_device_mesh does: TPU trays in ring order, and other TPU
// slices by physical coordinates, mapping the most communication-heavy (last)
// logical axis onto whole physical axes first. GPUs are sorted by id, as JAX
// 0.11 and later do (the oracle's version is 0.12); the GPUsInGivenOrder option
// keeps the given order, as JAX 0.8.1 did. CreateHybrid lays several slices out along
// DCN axes, which are major, and MakeMesh is jax.make_mesh (a prefix of the
// devices, ordered by Create). LocalMesh returns the sub-cube a process owns.
//
// # Several processes
//
// A mesh may hold the devices of several processes (each device says which
// through ProcessIndex). AddressableShards gives what one process holds;
// ProcessLocalShape, LocalToGlobalShape and ProcessLocalShards give the
// process-local array it loads or gathers and where each of its shards sits
// in it, with the arithmetic of JAX's make_array_from_process_local_data
// (package jit builds and gathers global arrays with them).
//
// # Logical axis rules
//
// LogicalToMesh maps logical dimension names ("batch", "embed") to mesh axes
// through ordered rules, with flax's algorithm (flax.linen.spmd).
//
// # Visualisation
//
// Visualize writes the box table jax.debug.visualize_array_sharding prints
// for a 1-D or 2-D array, without colour.
//
// # Errors
//
// Nothing here panics on bad input except the Must helpers. Errors start
// with "mesh: ", follow JAX's wording, name the offending axis, dimension
// and sizes, and wrap the package's sentinel errors (ErrUnknownAxis,
// ErrIndivisible, ...); the common ones are also typed (UnknownAxisError,
// IndivisibleError, ...).
//
// # Sketch
//
//	m, err := mesh.New(client.Devices(), []int{4, 2}, "x", "y")
//	s, err := mesh.NewNamedSharding(m, mesh.P("x", nil))
//	idx, err := s.DevicesIndicesMap([]int{8, 8}) // idx[0] == [0:2, 0:8]
package mesh
