// Package lowertest holds what the tests of lower and lower/wrap share, so that neither keeps a
// copy of the other's helpers. It sits above lower and pjrt/pjrttest, for tests only: a test builds
// a lower.Program (with lower or wrap) and hands it here to be compiled and run on the client
// pjrttest.Client opened.
//
// # The test mesh
//
// Mesh42 is the golden cases' mesh: 8 simulated devices as x=4, y=2 (device = 2*ix + iy). NS and
// On are the sharding shorthands the test tables use (NS("x", nil) is P("x", None) on Mesh42);
// Reversed lists devices in reverse order for meshes whose device order is not the identity.
//
// # Running on the plugin
//
// The integration tests follow the client's device count: MeshSizes fits the 4x2 mesh to it,
// RealMesh builds that ("x", "y") mesh over the client's first devices (Mesh42's shape on 8).
// Compile compiles a Program with the mesh's device assignment and the Program's partitioner;
// Run also places global f32 inputs on the mesh by the Program's argument shardings, executes,
// and gathers each result by its result sharding, failing the test when replicas disagree.
// Tiles gives the tile dimensions XLA reports for a sharding, for tests that read a compiled
// program's shardings back.
//
//	c := pjrttest.Client(t)
//	m := lowertest.RealMesh(t, c)
//	got := lowertest.Run(t, c, m, prog, [][]float32{x}) // one global []float32 per result
package lowertest
