package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spinMLIR is a while loop whose condition, i == i, always holds: a call never ends.
const spinMLIR = `module @jit_spin attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<4xf32>
     cond {
      %c = stablehlo.compare EQ, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %ones = stablehlo.constant dense<1.0> : tensor<4xf32>
      %v1 = stablehlo.add %v, %ones : tensor<4xf32>
      stablehlo.return %i1, %v1 : tensor<i32>, tensor<4xf32>
    }
    return %0#1 : tensor<4xf32>
  }
}`

// TestBenchTimeout runs the command on a kernel that never ends: with -timeout 2s it exits
// with status 1 soon after, naming the kernel, instead of hanging.
func TestBenchTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spin.mlir")
	require.NoError(t, os.WriteFile(path, []byte(spinMLIR), 0o644))
	start := time.Now()
	stdout, stderr, code := runMain(t, "bench", "-kernel", path, "-iters", "1", "-q", "-timeout", "2s")
	assert.Less(t, time.Since(start), time.Minute)
	assert.Equal(t, 1, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, "\nxlamesh: bench: kernel "+path+": a call timed out: it did not end within -timeout 2s "+
		"(a loop that never ends? raise -timeout, or 0 for no limit)\n", stderr, "-q: the message alone")

	_, stderr, code = runMain(t, "bench", "-kernel", path, "-timeout", "-1s")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-timeout must not be negative, got -1s")
}
