package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestCkptLs lists a checkpoint of two arrays, as a table and as JSON, and refuses what is
// not one.
func TestCkptLs(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 4)
	m, err := mesh.New(jit.Devices(c), []int{4}, "x")
	require.NoError(t, err)
	s := mesh.MustNamedSharding(m, mesh.P("x"))
	w, err := jit.Put(c, make([]float32, 32), []int{8, 4}, s)
	require.NoError(t, err)
	defer w.Close()
	b, err := jit.Put(c, []int32{1, 2, 3, 4}, []int{4}, mesh.MustNamedSharding(m, mesh.P()))
	require.NoError(t, err)
	defer b.Close()
	dir := filepath.Join(t.TempDir(), "step_1")
	require.NoError(t, checkpoint.Save(context.Background(), dir, map[string]*jit.Array{"w": w, "b": b}))

	var out bytes.Buffer
	require.NoError(t, ckpt(&out, []string{"ls", dir}))
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 4, out.String())
	assert.Regexp(t, `^NAME +FORMAT +DTYPE +SHAPE +CHUNKS +FILES +BYTES$`, string(lines[0]))
	assert.Regexp(t, `^b +zarr +int32 +\(4,\) +\(4,\) +1 +\d+$`, string(lines[1]))
	assert.Regexp(t, `^w +zarr +float32 +\(8, 4\) +\(2, 4\) +4 +\d+$`, string(lines[2]))
	assert.Regexp(t, `^2 arrays +\d+$`, string(lines[3]))

	out.Reset()
	require.NoError(t, ckpt(&out, []string{"ls", "-format", "json", dir}))
	var rows []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows))
	require.Len(t, rows, 2)
	assert.Equal(t, "w", rows[1]["name"])
	assert.Equal(t, []any{8.0, 4.0}, rows[1]["shape"])

	err = ckpt(&out, []string{"ls", filepath.Join(dir, "none")})
	assert.ErrorIs(t, err, checkpoint.ErrIncomplete)
	assert.ErrorContains(t, err, "none")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "w", ".zarray"), []byte("{"), 0o644))
	err = ckpt(&out, []string{"ls", dir})
	assert.ErrorIs(t, err, checkpoint.ErrFormat)
	assert.ErrorContains(t, err, filepath.Join(dir, "w", ".zarray"))
	var ue *usageErr
	assert.ErrorAs(t, ckpt(&out, []string{"rm", dir}), &ue)
	assert.ErrorAs(t, ckpt(&out, []string{"ls"}), &ue)
	assert.ErrorAs(t, ckpt(&out, []string{"ls", "-format", "xml", dir}), &ue)
}
