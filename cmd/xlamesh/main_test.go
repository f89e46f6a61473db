package main

import (
	"bytes"
	"testing"

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
	require.NoError(t, bench(&b, []string{"-n", "64", "-iters", "2", "-devices", "4"}))
	for _, m := range []string{"4x1", "2x2", "1x4"} {
		assert.Contains(t, b.String(), m)
	}
}
