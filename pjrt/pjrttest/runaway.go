package pjrttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// EnvChild names the environment variable RunChild sets in the child process it starts.
const EnvChild = "XLAMESH_RUNAWAY_CHILD"

// SpinModule returns a program of n partitions that never ends: a stablehlo.while whose
// condition, i == i, always holds, on a tensor<4xf32> argument (module @jit_spin, or
// @jit_spin<n> for n > 1). The tests of deadlines, cancellation and closing run it as the call
// that must be abandoned; a program that spins until its process ends belongs in a child
// process (RunChild).
func SpinModule(n int) string {
	name := "jit_spin"
	if n > 1 {
		name = fmt.Sprintf("jit_spin%d", n)
	}
	return fmt.Sprintf(`module @%s attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%%x: tensor<4xf32>) -> tensor<4xf32> {
    %%zero = stablehlo.constant dense<0> : tensor<i32>
    %%0:2 = stablehlo.while(%%i = %%zero, %%v = %%x) : tensor<i32>, tensor<4xf32>
     cond {
      %%c = stablehlo.compare EQ, %%i, %%i : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %%c : tensor<i1>
    } do {
      %%one = stablehlo.constant dense<1> : tensor<i32>
      %%i1 = stablehlo.add %%i, %%one : tensor<i32>
      %%ones = stablehlo.constant dense<1.0> : tensor<4xf32>
      %%v1 = stablehlo.add %%v, %%ones : tensor<4xf32>
      stablehlo.return %%i1, %%v1 : tensor<i32>, tensor<4xf32>
    }
    return %%0#1 : tensor<4xf32>
  }
}`, name, n)
}

// IsChild reports whether this process is a child RunChild started.
func IsChild() bool { return os.Getenv(EnvChild) != "" }

// RunChild runs the test or tests matching ^name$ of this test binary in a child process with
// $XLAMESH_RUNAWAY_CHILD set (IsChild), for a test whose runaway program spins until its
// process ends, and fails t when the child fails or runs over 3 minutes. The child's output is
// logged.
func RunChild(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), EnvChild+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("the child failed: %v", err)
	}
}

// Within runs f with a context of timeout d and fails t (without stopping it) when f returns
// more than 2 s after the deadline; it returns f's error.
func Within(t testing.TB, d time.Duration, f func(context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	if late := time.Since(start); late >= d+2*time.Second {
		t.Errorf("returned after %v, over %v past the deadline of %v", late, 2*time.Second, d)
	}
	return err
}
