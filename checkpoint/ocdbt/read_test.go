package ocdbt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint/ocdbt"
)

// TestReadFixtures reads every key of every tensorstore-written fixture and compares it,
// and the list of keys, with what tensorstore itself read back.
func TestReadFixtures(t *testing.T) {
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			dir, entries := fixtureDB(t, name)
			db, err := ocdbt.Open(dir)
			require.NoError(t, err)
			defer db.Close()
			keys, err := db.List("")
			require.NoError(t, err)
			require.Equal(t, sortedKeys(entries), keys)
			for _, k := range keys {
				v, err := db.Get(k)
				require.NoError(t, err, k)
				require.Equal(t, entries[k], v, k)
			}
			_, err = db.Get("no such key")
			require.ErrorIs(t, err, ocdbt.ErrNotFound)
			require.NoError(t, db.Close())
			_, err = db.Get(keys[0])
			if errors.Is(err, ocdbt.ErrClosed) || err == nil {
				return // inline values need no file
			}
			t.Fatalf("Get after Close: %v", err)
		})
	}
}

func TestListPrefix(t *testing.T) {
	dir, entries := fixtureDB(t, "multilevel")
	db, err := ocdbt.Open(dir)
	require.NoError(t, err)
	defer db.Close()
	for _, prefix := range []string{"", "tree/", "tree/key0", "tree/key013", "tree/key1399", "tree/key13993", "tree/key13994", "tree/key2", "t", "u", "\xff", "tree/key\xff"} {
		var want []string
		for _, k := range sortedKeys(entries) {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		got, err := db.List(prefix)
		require.NoError(t, err, prefix)
		assert.Equal(t, want, got, "prefix %q", prefix)
	}
}

// TestVersions walks the version trees: tensorstore's first commit makes generation 1
// (empty) and each transaction one more; with version_tree_arity_log2 1 the versions
// fixture keeps most of them in version tree nodes outside the manifest.
func TestVersions(t *testing.T) {
	for name, wantKeys := range map[string][]uint64{
		"single":   {0, 31},
		"versions": {0, 3, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 7},
		"numbered": {0, 2, 3, 4},
		"orbax":    {6},
	} {
		t.Run(name, func(t *testing.T) {
			dir, entries := fixtureDB(t, name)
			db, err := ocdbt.Open(dir)
			require.NoError(t, err)
			defer db.Close()
			vs, err := db.Versions()
			require.NoError(t, err)
			require.Len(t, vs, len(wantKeys))
			for i, v := range vs {
				assert.Equal(t, uint64(i+1), v.Generation)
				assert.Equal(t, wantKeys[i], v.NumKeys, "generation %d", v.Generation)
				if i > 0 {
					assert.False(t, v.CommitTime.Before(vs[i-1].CommitTime))
				}
			}
			require.Equal(t, vs[len(vs)-1], db.Version())
			require.Equal(t, uint64(len(entries)), db.Version().NumKeys)
		})
	}
}
