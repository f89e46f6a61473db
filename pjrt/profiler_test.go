package pjrt_test

import (
	"bytes"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// msg builds a protobuf message from fields appended by the functions given.
func msg(fields ...func([]byte) []byte) []byte {
	var b []byte
	for _, f := range fields {
		b = f(b)
	}
	return b
}

func varint(n protowire.Number, v uint64) func([]byte) []byte {
	return func(b []byte) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
	}
}

func bytesField(n protowire.Number, v []byte) func([]byte) []byte {
	return func(b []byte) []byte { return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v) }
}

func str(n protowire.Number, s string) func([]byte) []byte { return bytesField(n, []byte(s)) }

func double(n protowire.Number, f float64) func([]byte) []byte {
	return func(b []byte) []byte {
		return protowire.AppendFixed64(protowire.AppendTag(b, n, protowire.Fixed64Type), math.Float64bits(f))
	}
}

// testXSpace is an XSpace as the CUDA plugin's profiler writes one (field numbers of
// tsl/profiler/protobuf/xplane.proto), with one plane of two lines, followed by the trailing
// zero byte XLA's profiler plugin appends.
func testXSpace() []byte {
	statMeta := func(id uint64, name string) func([]byte) []byte {
		return bytesField(5, msg(varint(1, id), bytesField(2, msg(varint(1, id), str(2, name)))))
	}
	plane := msg(
		varint(1, 7), str(2, "/device:GPU:0"),
		// event_metadata: 10 is "fusion.1" shown as "fusion"; 11 has only a name.
		bytesField(4, msg(varint(1, 10), bytesField(2, msg(varint(1, 10), str(2, "fusion.1"), str(4, "fusion"))))),
		bytesField(4, msg(varint(1, 11), bytesField(2, msg(varint(1, 11), str(2, "memcpy"))))),
		statMeta(1, "flops"), statMeta(2, "hlo_op"), statMeta(3, "dot.2"), statMeta(4, "occupancy"),
		// line 3: starts at 1000 ns; fusion at +1.5 us for 2.5 us, a memcpy, an aggregated event.
		bytesField(3, msg(varint(1, 3), str(2, "stream3"), str(11, "Stream #3"), varint(3, 1000),
			bytesField(4, msg(varint(1, 10), varint(2, 1_500_000), varint(3, 2_500_000),
				bytesField(4, msg(varint(1, 1), varint(3, 42))),
				bytesField(4, msg(varint(1, 2), varint(7, 3))))),
			bytesField(4, msg(varint(1, 11), varint(2, 5_000_001), varint(3, 7))),
			bytesField(4, msg(varint(1, 10), varint(5, 9), varint(3, 1))))),
		// line 4: starts 2 us later; an event of unknown metadata with a double and a string.
		bytesField(3, msg(varint(1, 4), str(2, "host"), varint(3, 3000),
			bytesField(4, msg(varint(1, 99), varint(2, 0), varint(3, 1_000_000),
				bytesField(4, msg(varint(1, 4), double(2, 0.5))),
				bytesField(4, msg(varint(1, 77), str(5, "x"))))))),
	)
	return append(msg(bytesField(1, plane), str(4, "host0")), 0)
}

// TestWriteChromeTrace converts an XSpace built here into the exact Chrome trace JSON.
func TestWriteChromeTrace(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, pjrt.WriteChromeTrace(&out, testXSpace()))
	want := `{"displayTimeUnit":"ns","otherData":{"start_ns":1000},"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"/device:GPU:0"}},
{"name":"thread_name","ph":"M","pid":1,"tid":3,"args":{"name":"Stream #3"}},
{"name":"fusion","ph":"X","pid":1,"tid":3,"ts":1.5,"dur":2.5,"args":{"flops":42,"hlo_op":"dot.2"}},
{"name":"memcpy","ph":"X","pid":1,"tid":3,"ts":5.000001,"dur":0.000007},
{"name":"thread_name","ph":"M","pid":1,"tid":4,"args":{"name":"host"}},
{"name":"event 99","ph":"X","pid":1,"tid":4,"ts":2,"dur":1,"args":{"occupancy":0.5,"stat 77":"x"}}
]}
`
	assert.Equal(t, want, out.String())
}

// TestWriteChromeTraceEmpty: an empty XSpace (a profiler that recorded nothing) is an empty trace.
func TestWriteChromeTraceEmpty(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, pjrt.WriteChromeTrace(&out, nil))
	assert.Equal(t, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"start_ns\":0},\"traceEvents\":[\n]}\n", out.String())
}

// TestWriteChromeTraceMalformed: a truncated XSpace is a typed error, never a panic.
func TestWriteChromeTraceMalformed(t *testing.T) {
	b := testXSpace()
	for _, cut := range []int{1, 2, 10, len(b) / 2, len(b) - 3} {
		err := pjrt.WriteChromeTrace(&bytes.Buffer{}, b[:cut])
		require.ErrorIs(t, err, xlaproto.ErrMalformed, "cut at %d", cut)
		assert.Contains(t, err.Error(), "pjrt: trace: xlaproto: XSpace: ")
	}
}

// TestProfilerCPUOnly: the CPU plugins have no profiler extension; starting one is a typed
// error naming the plugin.
func TestProfilerCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	if c.Platform() != "cpu" {
		t.Fatalf("this test is about the CPU plugins; the client is %s (run it without %s=gpu)", c.Platform(), pjrttest.EnvPlatform)
	}
	assert.False(t, c.Plugin().HasProfiler())
	pr, err := c.Plugin().StartProfiler()
	require.ErrorIs(t, err, pjrt.ErrNoProfiler)
	assert.Nil(t, pr)
	assert.Contains(t, err.Error(), "pjrt: plugin "+c.Plugin().Path()+" (PJRT C API 0.")
	assert.Contains(t, err.Error(), "plugin has no profiler extension: it cannot record a trace")
}

// TestProfilerCUDAPluginWithoutGPU: the CUDA plugin has the profiler extension, and its profiler
// records on this GPU-less machine too (host activity only): the trace converts.
func TestProfilerCUDAPluginWithoutGPU(t *testing.T) {
	p, err := pjrt.LoadPlugin(cudaPluginPath(t))
	require.NoError(t, err)
	require.True(t, p.HasProfiler())
	pr, err := p.StartProfiler()
	require.NoError(t, err)
	_, err = p.StartProfiler()
	require.ErrorIs(t, err, pjrt.ErrProfiler, "a second profiler while one is open")
	xspace, err := pr.Stop()
	require.NoError(t, err)
	_, err = pr.Stop()
	require.ErrorIs(t, err, pjrt.ErrProfiler, "stopped twice")
	require.NoError(t, pr.Close())
	require.NoError(t, pr.Close())
	_, err = pr.Stop()
	require.ErrorIs(t, err, pjrt.ErrClosed)
	if os.Getenv(pjrttest.EnvPlatform) != "gpu" {
		// Without a GPU nothing is recorded: XLA's plugin hands out an empty XSpace plus the one
		// trailing zero byte it appends.
		assert.Equal(t, []byte{0}, xspace)
	}
	var out bytes.Buffer
	require.NoError(t, pjrt.WriteChromeTrace(&out, xspace))
	t.Logf("%d bytes of XSpace, trace: %.300s", len(xspace), out.String())
	pr, err = p.StartProfiler() // the process-wide slot is free again
	require.NoError(t, err)
	require.NoError(t, pr.Close())
}
