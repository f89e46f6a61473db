// Package examples holds runnable programs that show xlamesh end to end on XLA's CPU plugin with
// 8 devices: a data-parallel MLP training step, a model-parallel matmul, a shard_map with an
// all-reduce, and the compile cache keyed on the abstract mesh. Each is an Example function,
// so `go test ./examples/` runs them and checks their output.
package examples
