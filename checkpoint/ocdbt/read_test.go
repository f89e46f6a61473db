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
