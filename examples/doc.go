// Package examples holds runnable programs that show xlamesh end to end on XLA's CPU plugin with
// 8 devices: a data-parallel MLP training step with hand-written gradients, 20 steps of sharded
// training of the MLP of package examples/mlp with gradients from package autodiff (data x
// model parallel on a 2x4 mesh; the losses equal JAX's), a model-parallel matmul, a shard_map
// with an all-reduce, and the compile cache keyed on the abstract mesh. Each is an Example
// function, so `go test ./examples/` runs them and checks their output.
package examples
