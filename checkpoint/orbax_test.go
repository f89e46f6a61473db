package checkpoint_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// orbaxFixture is testdata/checkpoint/orbax.json: a checkpoint orbax-checkpoint 0.12.8 wrote
// with its defaults (tools/oracle/checkpoint_orbax.py), frozen.
type orbaxFixture struct {
	OrbaxVersion string            `json:"orbax_version"`
	Files        map[string]string `json:"files"`
	Arrays       []struct {
		Name  string      `json:"name"`
		Mesh  []int       `json:"mesh"`
		Axes  []string    `json:"axes"`
		Spec  []any       `json:"spec"`
		Array oracleArray `json:"array"`
	} `json:"arrays"`
}

// TestFrozenFixtures: the fixtures that tools regenerate differently on every run (Orbax's
// random file names and times) are frozen; their hashes are in testdata/checkpoint/frozen.sha256.
func TestFrozenFixtures(t *testing.T) {
	f, err := os.Open("../testdata/checkpoint/frozen.sha256")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "line %q", sc.Text())
		raw, err := os.ReadFile(filepath.Join("../testdata/checkpoint", name))
		require.NoError(t, err)
		got := sha256.Sum256(raw)
		require.Equal(t, sum, hex.EncodeToString(got[:]), "%s changed: it is frozen (made once by its generator)", name)
		n++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 1, n)
}

// TestRestoresOrbax restores the checkpoint Orbax wrote (OCDBT with zarr v2 inside; replicated
// shards split across their replicas) onto the shardings it was saved with and onto others,
// by Orbax's names (a flat map keyed "params.w" names its leaves as Orbax does), and lists it.
func TestRestoresOrbax(t *testing.T) {
	raw, err := os.ReadFile("../testdata/checkpoint/orbax.json")
	require.NoError(t, err)
	var fx orbaxFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.Equal(t, "0.12.8", fx.OrbaxVersion)
	dir := filepath.Join(t.TempDir(), "step_1")
	writeFiles(t, dir, fx.Files)
	require.FileExists(t, filepath.Join(dir, "manifest.ocdbt"))
	require.FileExists(t, filepath.Join(dir, "ocdbt.process_0", "manifest.ocdbt"))

	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	saved := map[string]mesh.NamedSharding{}
	other := map[string]mesh.NamedSharding{}
	for _, a := range fx.Arrays {
		saved[a.Name] = sharding(t, c, a.Mesh, a.Axes, specOf(a.Spec))
		other[a.Name] = sharding(t, c, []int{2}, []string{"h"}, mesh.P())
		if len(a.Array.Shape) > 0 && a.Array.Shape[0]%2 == 0 {
			other[a.Name] = sharding(t, c, []int{2}, []string{"h"}, mesh.P("h"))
		}
	}
	for _, target := range []map[string]mesh.NamedSharding{saved, other} {
		got, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, target)
		require.NoError(t, err)
		for _, a := range fx.Arrays {
			assertArray(t, a.Array, got[a.Name], a.Name)
			assert.True(t, got[a.Name].Sharding().Equal(target[a.Name]))
			require.NoError(t, got[a.Name].Close())
		}
	}

	info, err := checkpoint.Info(dir)
	require.NoError(t, err)
	require.Len(t, info, len(fx.Arrays))
	for _, in := range info {
		assert.True(t, in.OCDBT, in.Name)
		assert.Equal(t, int64(-1), in.Bytes, in.Name)
		if in.Name == "params.emb" {
			assert.Equal(t, []int{2, 4}, in.Chunks, "Orbax splits a replicated shard across its replicas")
			assert.Equal(t, 8, in.Files)
		}
	}

	// A missing chunk names the database and the key.
	_, err = checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, map[string]mesh.NamedSharding{"nothing": saved["step"]})
	assert.ErrorIs(t, err, checkpoint.ErrFormat)
	assert.ErrorContains(t, err, `key "nothing" of the OCDBT database `+filepath.Join(dir, "manifest.ocdbt"))
}
