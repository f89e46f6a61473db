package main

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSpec(t *testing.T) {
	for in, want := range map[string]string{
		"x,y":       "P('x', 'y')",
		"x,_":       "P('x', None)",
		"(y x),?":   "P(('y', 'x'), UNCONSTRAINED)",
		"":          "P()",
		"None,data": "P(None, 'data')",
	} {
		assert.Equal(t, want, parseSpec(in).String(), in)
	}
}

func TestVisualizeSim(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, visualize(&b, []string{"-sim", "-mesh", "x=4,y=2", "-spec", "_,y", "-shape", "8,8"}))
	assert.Contains(t, b.String(), "│CPU 0,2,4,6│CPU 1,3,5,7│")
	err := visualize(&b, []string{"-sim", "-mesh", "x=4,y=2", "-spec", "w", "-shape", "8,8"})
	assert.ErrorContains(t, err, "resource axis w")
	err = visualize(&b, []string{"-sim", "-mesh", "x=4", "-shape", "8,z"})
	assert.ErrorContains(t, err, "-shape")
}

func TestDevicesAndBench(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, devices(&b, []string{"-devices", "4"}))
	assert.Contains(t, b.String(), "API      0.81")
	assert.Contains(t, b.String(), "CpuDevice(id=3)")
	b.Reset()
	const n = 64
	require.NoError(t, bench(&b, []string{"-n", strconv.Itoa(n), "-iters", "2", "-devices", "4"}))
	checkBenchOutput(t, b.String(), n, []string{"4x1", "2x2", "1x4"})
}

// checkBenchOutput checks bench's report: the header for an n x n matmul on
// 4 devices, then one row per mesh shape in order, each with a positive time
// per call and the GFLOP/s that 2n³ flops in that time give.
func checkBenchOutput(t *testing.T, out string, n int, meshes []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2+len(meshes), out)
	assert.Equal(t, fmt.Sprintf("matmul f32[%d,%d] x f32[%d,%d], A P('x', None), B P(None, 'y'), C P('x', 'y'), 4 devices", n, n, n, n), lines[0])
	assert.Equal(t, []string{"mesh", "per", "call", "GFLOP/s"}, strings.Fields(lines[1]))
	for i, m := range meshes {
		f := strings.Fields(lines[2+i])
		require.Len(t, f, 3, lines[2+i])
		assert.Equal(t, m, f[0])
		d, err := time.ParseDuration(f[1])
		require.NoError(t, err, lines[2+i])
		require.Positive(t, d, lines[2+i])
		gflops, err := strconv.ParseFloat(f[2], 64)
		require.NoError(t, err, lines[2+i])
		// The time is printed rounded to the microsecond, the rate from the exact time.
		lo := 2 * math.Pow(float64(n), 3) / (d + time.Microsecond/2).Seconds() / 1e9
		hi := 2 * math.Pow(float64(n), 3) / max(d-time.Microsecond/2, time.Nanosecond).Seconds() / 1e9
		assert.True(t, gflops >= lo-0.05 && gflops <= hi+0.05, "%s: %g GFLOP/s, want %.2f..%.2f for %v", m, gflops, lo, hi, d)
	}
}

func TestCheckMatMul(t *testing.T) {
	const n = 16
	a := make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%17) / 17
	}
	c := make([]float32, n*n)
	for i := range n {
		for j := range n {
			for l := range n {
				c[i*n+j] += a[i*n+l] * a[l*n+j]
			}
		}
	}
	require.NoError(t, checkMatMul(c, a, n))
	c[(7919%n)*n+(104729%n)] += 0.5 // the entry of the first sample
	assert.ErrorContains(t, checkMatMul(c, a, n), "product C[")
	assert.ErrorContains(t, checkMatMul(c[:n], a, n), "product has 16 elements, want 256")
}
