package pjrt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestCompileChecksFirst: Compile runs mlir.Check with its device count before the plugin
// sees the program. Each module here killed the process, hung in execute, or compiled
// something other than what it says, on the pinned CPU plugin.
func TestCompileChecksFirst(t *testing.T) {
	c := pjrttest.Client(t)
	s := seedFor(c)
	all := s.ids(c) // 0, 1, ..., 7 on 8 devices
	seed := s.module()
	parts := fmt.Sprintf("num_partitions = %d", s.parts())
	tests := []struct {
		name string
		text string
		opts pjrt.CompileOptions
		kind error
		msg  string
	}{
		// The 8-partition program compiled for one device: refused before any device is used.
		{"8 partitions, no device assignment", seedModule, pjrt.CompileOptions{}, mlir.ErrPartitions,
			"annotated for 8 partitions but is compiled for 1 device;"},
		// Compiled for the client's seed mesh (8 devices on 8, 1 on 1), annotated otherwise.
		{"num_partitions 3 on 8 devices", strings.Replace(seed, parts, "num_partitions = 3", 1),
			pjrt.CompileOptions{DeviceAssignment: all}, mlir.ErrPartitions, "annotated for 3 partitions but is compiled for " + devices(len(all))},
		{"num_partitions 0 on 8 devices", strings.Replace(seed, parts, "num_partitions = 0", 1),
			pjrt.CompileOptions{DeviceAssignment: all}, mlir.ErrPartitions, "0 partitions, want >= 1"},
		{"infeed", `module {
  func.func public @main(%t: !stablehlo.token) -> tensor<2xf32> {
    %0:2 = "stablehlo.infeed"(%t) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
    return %0#0 : tensor<2xf32>
  }
}`, pjrt.CompileOptions{}, mlir.ErrUnsupportedOp, "stablehlo.infeed"},
		{"recursion", `module {
  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`, pjrt.CompileOptions{}, mlir.ErrRecursion, "@f calls @f"},
		{"axis name XLA aborts on", strings.ReplaceAll(seed, `"x"`, `"\C3\A9"`), pjrt.CompileOptions{DeviceAssignment: all},
			mlir.ErrName, `axis "\C3\A9"`},
		// {devices=[4,2]<=[4,2]} on 8 devices: a reshape without its transpose.
		{"unparsable mhlo.sharding", strings.Replace(gspmdModule(s), fmt.Sprintf("<=[%d]}", s.parts()), fmt.Sprintf("<=[%d,%d]}", s.x, s.y), 1),
			pjrt.CompileOptions{DeviceAssignment: all, Partitioner: pjrt.GSPMD}, mlir.ErrSharding, "expected 'T('"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := pjrt.LiveExecutables()
			exe, err := c.Compile(tc.text, tc.opts)
			if exe != nil {
				exe.Close()
			}
			require.ErrorIs(t, err, pjrt.ErrCompile)
			require.ErrorIs(t, err, tc.kind)
			var e *mlir.Error
			require.True(t, errors.As(err, &e))
			require.ErrorContains(t, err, tc.msg)
			require.Equal(t, before, pjrt.LiveExecutables())
		})
	}
	// The same programs, written correctly, compile.
	exe, err := c.Compile(seed, pjrt.CompileOptions{DeviceAssignment: all})
	require.NoError(t, err)
	require.NoError(t, exe.Close())
}

// devices returns "1 device" or "n devices", as mlir's messages say it.
func devices(n int) string {
	if n == 1 {
		return "1 device"
	}
	return fmt.Sprintf("%d devices", n)
}

// TestQuotedNamesRun: symbol and axis names of the accepted class (printable ASCII but '\')
// that need quoting and escaping compile and run: the mesh symbol, the module and the axes of
// the seed program renamed.
func TestQuotedNamesRun(t *testing.T) {
	c := pjrttest.Client(t)
	s := seedFor(c)
	text := strings.NewReplacer(
		"@mesh", `@"mesh 1-\22'{}"`,
		"@jit_f", `@"jit_my-fn"`,
		`"x"`, `"x \22y\22"`,
		`"y"`, `"=,:'"`,
	).Replace(s.module())
	require.NoError(t, mlir.Check(text, mlir.Partitions(s.parts())))
	exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: s.ids(c)})
	require.NoError(t, err, text)
	defer exe.Close()
	runSeed(t, c, exe, s)
}
