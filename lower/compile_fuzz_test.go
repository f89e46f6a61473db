package lower_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The compile fuzzer's child process: TestMain runs compileChild instead of the tests when
// envCompileChild names a file holding a module.
const (
	envCompileChild      = "XLAMESH_COMPILE_CHILD"
	envCompilePartitions = "XLAMESH_COMPILE_PARTITIONS"
	envCompileDevices    = "XLAMESH_COMPILE_DEVICES"
	compileChildTimeout  = 60 * time.Second // a small module compiles in well under a second
	compileChildDevices  = 8                // the most partitions a fuzzed module is compiled for
)

// compileChild compiles the module in the file named by envCompileChild for the first
// envCompilePartitions devices of a client with envCompileDevices devices (the parent's
// pjrttest.Client count: 8 CPU devices by default) and returns the exit code: 0 when it
// compiled or failed with a typed pjrt.ErrCompile error, 1 for anything else. XLA crashing the
// process shows as a signal or Go's exit code 2.
func compileChild() int {
	text, err := os.ReadFile(os.Getenv(envCompileChild))
	if err != nil {
		fmt.Fprintln(os.Stderr, "compile child:", err)
		return 1
	}
	devices, err := strconv.Atoi(os.Getenv(envCompileDevices))
	if err != nil || devices < 1 {
		fmt.Fprintln(os.Stderr, "compile child: bad device count", os.Getenv(envCompileDevices))
		return 1
	}
	n, err := strconv.Atoi(os.Getenv(envCompilePartitions))
	if err != nil || n < 1 || n > min(devices, compileChildDevices) {
		fmt.Fprintln(os.Stderr, "compile child: bad partition count", os.Getenv(envCompilePartitions))
		return 1
	}
	c, err := pjrttest.Open(devices)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compile child:", err)
		return 1
	}
	defer c.Close()
	ids := make([]int, n)
	for i := range ids {
		ids[i] = c.Devices()[i].ID()
	}
	exe, err := c.Compile(string(text), pjrt.CompileOptions{DeviceAssignment: ids})
	if err != nil {
		fmt.Println("compile error:", err)
		if !errors.Is(err, pjrt.ErrCompile) {
			return 1
		}
		return 0
	}
	fmt.Println("compiled for", exe.NumPartitions(), "partitions")
	exe.Close()
	return 0
}

// compileInChild compiles text for partitions devices in a child process with a client of
// devices devices, and fails t if the child died from a signal, crashed, or ran past
// compileChildTimeout.
func compileInChild(t *testing.T, text string, partitions, devices int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "module.mlir")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), compileChildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envCompileChild+"="+file, envCompilePartitions+"="+strconv.Itoa(partitions),
		envCompileDevices+"="+strconv.Itoa(devices))
	out, err := cmd.CombinedOutput()
	tail := string(out)
	if len(tail) > 4000 {
		tail = "..." + tail[len(tail)-4000:]
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("compiling in a child hung for %v:\n%s\nmodule:\n%s", compileChildTimeout, tail, text)
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("compiling in a child: killed by %v:\n%s\nmodule:\n%s", ws.Signal(), tail, text)
		}
		t.Fatalf("compiling in a child: exit code %d (2 is a crash Go reported):\n%s\nmodule:\n%s", exit.ExitCode(), tail, text)
	case err != nil:
		t.Fatalf("compiling in a child: %v", err)
	}
	t.Logf("child: %s", strings.TrimSpace(lastLine(string(out))))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// FuzzCompile compiles every input that mlir.Check accepts, each in a child process (this
// test binary, re-run with envCompileChild set), and fails when XLA kills the child or it
// hangs: such an input is a gap in the checker. Inputs the checker rejects cost microseconds;
// each compile costs a process start, a CPU client and the compile (about a second). The child's
// client has as many devices as pjrttest.Client's; an input for more partitions than that is
// skipped (pjrttest.NeedDevices).
func FuzzCompile(f *testing.F) {
	f.Add(`module @m attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}`, uint8(8))
	f.Add(`module {
  func.func public @main(%x: tensor<4xi32>, %i: tensor<i32>) -> tensor<4xi32> {
    %0 = "stablehlo.case"(%i) ({
      "stablehlo.return"(%x) : (tensor<4xi32>) -> ()
    }) : (tensor<i32>) -> tensor<4xi32>
    %1 = func.call @f(%0) : (tensor<4xi32>) -> tensor<4xi32>
    return %1 : tensor<4xi32>
  }
  func.func private @f(%x: tensor<4xi32>) -> tensor<4xi32> {
    return %x : tensor<4xi32>
  }
}`, uint8(1))
	// Known crashers of the pinned plugin, which the checker rejects before any compile.
	f.Add(strings.Replace(gspmdSeed, "SHARDING", "{devices=[4,2]<=[2,4]T(1,1)}", 1), uint8(8))
	f.Add(strings.Replace(gspmdSeed, "SHARDING", "{devices=[2,2,2]<=[8] last_tile_dim_replicate last_tile_dims={replicated}}", 1), uint8(8))
	f.Add(`module {
  func.func public @main(%x: tensor<f32>, %t: tensor<4611686018427387904xf32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}`, uint8(1))
	f.Fuzz(func(t *testing.T, text string, n uint8) {
		partitions := int(n) % compileChildDevices
		if partitions == 0 {
			partitions = compileChildDevices
		}
		if mlir.Check(text, mlir.Partitions(partitions)) != nil {
			return
		}
		c := pjrttest.NeedDevices(t, partitions)
		compileInChild(t, text, partitions, len(c.Devices()))
	})
}

// gspmdSeed is a GSPMD module whose argument sharding is SHARDING.
const gspmdSeed = `module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<8x8xf32> {mhlo.sharding = "SHARDING"}) -> tensor<8x8xf32> {
    %0 = stablehlo.add %x, %x : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}`
