package pjrt_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// envQuietChild names the plugin the child of TestCompileIsQuietOn0115 compiles on.
const envQuietChild = "XLAMESH_TEST_QUIET_CHILD"

// TestCompileIsQuietOn0115 compiles and runs a Shardy program on the 0.115 CPU plugin in a
// child process whose environment leaves XLA's log level to xlamesh, and checks that the child
// wrote nothing to stderr: that plugin printed a shardy_xla_pass.cc HloShardingV3 warning on
// every compile. A GSPMD program may print XLA's deprecation of GSPMD (a warning about the
// caller's choice), but not that one.
func TestCompileIsQuietOn0115(t *testing.T) {
	if v := os.Getenv(envQuietChild); v != "" {
		part, path, _ := strings.Cut(v, ":")
		compileQuietly(t, part, path)
		return
	}
	dir, err := pjrttest.CacheDir()
	require.NoError(t, err)
	p, err := plugins.Lookup("cpu")
	require.NoError(t, err)
	path := p.Path(dir)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the 0.115 CPU plugin is missing (%v); install it with: go run ./cmd/xlamesh install-plugin -plugin cpu", err)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, part := range []string{"shardy", "gspmd"} {
		cmd := exec.Command(exe, "-test.run=^TestCompileIsQuietOn0115$", "-test.count=1")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, pjrt.EnvXLALogLevel+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, envQuietChild+"="+part+":"+path)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		require.NoError(t, err, "the %s child failed:\n%s%s", part, stdout.String(), stderr.String())
		// A -cover build (the mutation tester's) adds a "coverage: ..." line; nothing else may come.
		out := regexp.MustCompile(`(?m)^coverage: .*\n`).ReplaceAllString(stdout.String(), "")
		assert.Equal(t, "PASS\n", out, part)
		if part == "shardy" {
			assert.Empty(t, stderr.String(), "compiling with Shardy on %s wrote to stderr", path)
		}
		assert.NotContains(t, stderr.String(), "HloShardingV3", part)
	}
}

// compileQuietly is the child: it compiles x+x over two devices with the partitioner part
// ("shardy" or "gspmd") on the plugin at path, runs it and checks the result.
func compileQuietly(t *testing.T, part, path string) {
	c, err := pjrt.Open(pjrt.WithPlugin(path), pjrt.WithCPUDeviceCount(2))
	require.NoError(t, err)
	defer c.Close()
	for _, tc := range []struct {
		name    string
		part    pjrt.Partitioner
		head    string
		sharded string
	}{
		{"shardy", pjrt.Shardy, `sdy.mesh @mesh = <["x"=2]>`, `{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}`},
		{"gspmd", pjrt.GSPMD, ``, `{mhlo.sharding = "{devices=[2]<=[2]}"}`},
	} {
		if tc.name != part {
			continue
		}
		text := `module @m attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  ` + tc.head + `
  func.func public @main(%arg0: tensor<4xf32> ` + tc.sharded + `) -> (tensor<4xf32> ` + tc.sharded + `) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`
		exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: []int{0, 1}, Partitioner: tc.part})
		require.NoError(t, err, "%v", tc.part)
		args := make([][]*pjrt.Buffer, 2)
		for d, dev := range exe.Devices() {
			b, err := c.BufferFromHost(dev, []float32{float32(2*d + 1), float32(2*d + 2)}, []int{2})
			require.NoError(t, err)
			defer b.Close()
			args[d] = []*pjrt.Buffer{b}
		}
		out, err := exe.Execute(args)
		require.NoError(t, err, "%v", tc.part)
		for d, bs := range out {
			got, err := bs[0].ToHost()
			require.NoError(t, err)
			assert.Equal(t, []float32{float32(4*d + 2), float32(4*d + 4)}, got, "%v, device %d", tc.part, d)
			bs[0].Close()
		}
		exe.Close()
	}
}
