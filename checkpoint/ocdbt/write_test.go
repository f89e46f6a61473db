package ocdbt_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint/ocdbt"
)

// value returns n bytes that depend on seed.
func value(seed, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(seed*7 + j*13 + j/251)
	}
	return b
}

// roundTripEntries covers value sizes around the inline limit and far above it, keys that
// share long prefixes, binary keys and enough keys for several B+tree levels.
func roundTripEntries() map[string][]byte {
	e := map[string][]byte{
		"empty":                  {},
		"one":                    {7},
		"inline99":               value(1, 99),
		"inline100":              value(2, 100),
		"ext101":                 value(3, 101),
		"ext1000":                value(4, 1000),
		"mib":                    value(5, 1<<20),
		"":                       value(6, 3),
		"\x00\xff\x01binary\x00": value(7, 150),
		"\xff\xff":               value(8, 5),
	}
	long := strings.Repeat("shared/prefix/", 30)
	for i := range 200 {
		e[fmt.Sprintf("%s%04d", long, i)] = value(i, i%130)
	}
	for i := range 5000 {
		e[fmt.Sprintf("many/%06d", i*3)] = value(i, i%20)
	}
	return e
}

var fixedTime = time.Date(2026, 11, 27, 12, 0, 0, 123456789, time.UTC)

func fixedOpts(extra ...ocdbt.Option) []ocdbt.Option {
	return append([]ocdbt.Option{
		ocdbt.WithRandom(rand.NewChaCha8([32]byte{1, 2, 3})),
		ocdbt.WithCommitTime(fixedTime),
	}, extra...)
}

func checkDB(t *testing.T, dir string, entries map[string][]byte) *ocdbt.DB {
	t.Helper()
	db, err := ocdbt.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	keys, err := db.List("")
	require.NoError(t, err)
	if len(entries) == 0 {
		require.Empty(t, keys)
	} else {
		require.Equal(t, sortedKeys(entries), keys)
	}
	for k, want := range entries {
		got, err := db.Get(k)
		require.NoError(t, err, "%q", k)
		require.True(t, bytes.Equal(want, got), "%q: %d bytes, want %d", k, len(got), len(want))
	}
	return db
}

func TestWriteRoundTrip(t *testing.T) {
	entries := roundTripEntries()
	for _, tc := range []struct {
		name string
		opts []ocdbt.Option
	}{
		{"default", nil},
		{"small nodes", []ocdbt.Option{ocdbt.WithMaxDecodedNodeBytes(1024)}},
		{"uncompressed small nodes", []ocdbt.Option{ocdbt.WithoutCompression(), ocdbt.WithMaxDecodedNodeBytes(512)}},
		{"inline 1024 level 19", []ocdbt.Option{ocdbt.WithMaxInlineValueBytes(1024), ocdbt.WithCompression(19)}},
		{"all indirect", []ocdbt.Option{ocdbt.WithMaxInlineValueBytes(0), ocdbt.WithMaxDecodedNodeBytes(4096)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			require.NoError(t, ocdbt.Write(dir, entries, fixedOpts(tc.opts...)...))
			db := checkDB(t, dir, entries)
			v := db.Version()
			require.Equal(t, uint64(1), v.Generation)
			require.True(t, fixedTime.Equal(v.CommitTime))
			require.Equal(t, uint64(len(entries)), v.NumKeys)
			vs, err := db.Versions()
			require.NoError(t, err)
			require.Equal(t, []ocdbt.Version{v}, vs)
			for _, p := range []string{"shared/", "many/0000", "many/0049", "\x00", "\xff", "z"} {
				got, err := db.List(p)
				require.NoError(t, err)
				var want []string
				for _, k := range sortedKeys(entries) {
					if strings.HasPrefix(k, p) {
						want = append(want, k)
					}
				}
				require.Equal(t, want, got, "prefix %q", p)
			}
			_, err = db.Get("many/000001")
			require.ErrorIs(t, err, ocdbt.ErrNotFound)
		})
	}
}

func TestWriteEmpty(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, ocdbt.Write(dir, nil, fixedOpts()...))
	db := checkDB(t, dir, nil)
	_, err := db.Get("x")
	require.ErrorIs(t, err, ocdbt.ErrNotFound)
	require.Equal(t, uint64(1), db.Version().Generation)
}

func TestWriteDeterministic(t *testing.T) {
	entries := roundTripEntries()
	read := func(dir string) map[string][]byte {
		files := map[string][]byte{}
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = b
			return err
		}))
		return files
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	opts := []ocdbt.Option{ocdbt.WithMaxDecodedNodeBytes(2048)}
	require.NoError(t, ocdbt.Write(a, entries, fixedOpts(opts...)...))
	require.NoError(t, ocdbt.Write(b, entries, fixedOpts(opts...)...))
	fa, fb := read(a), read(b)
	require.Len(t, fa, 2) // manifest.ocdbt and one data file
	require.Equal(t, fa, fb)
}

func TestWriteRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
	err := ocdbt.Write(dir, map[string][]byte{"a": nil})
	require.ErrorIs(t, err, ocdbt.ErrExists)
	require.Contains(t, err.Error(), dir)
}

func TestWriteRefusesLongKey(t *testing.T) {
	err := ocdbt.Write(t.TempDir(), map[string][]byte{strings.Repeat("k", 65536): nil})
	require.ErrorContains(t, err, "65536 bytes")
}

// TestWriteForTensorstore writes the databases that tools/oracle/ocdbt_read.py has
// tensorstore read back, each beside a .json of its entries. It writes them into
// XLAMESH_OCDBT_OUT when that is set (an empty or missing directory), else into a temporary
// one (and then only checks that Write succeeds):
//
//	XLAMESH_OCDBT_OUT=/tmp/ocdbt-go go test -run TestWriteForTensorstore ./checkpoint/ocdbt/
//	.cache/oracle-venv/bin/python tools/oracle/ocdbt_read.py /tmp/ocdbt-go/default /tmp/ocdbt-go/default.json
func TestWriteForTensorstore(t *testing.T) {
	out := os.Getenv("XLAMESH_OCDBT_OUT")
	if out == "" {
		out = t.TempDir()
	}
	for name, tc := range map[string]struct {
		entries map[string][]byte
		opts    []ocdbt.Option
	}{
		"default":      {roundTripEntries(), nil},
		"small-nodes":  {roundTripEntries(), []ocdbt.Option{ocdbt.WithMaxDecodedNodeBytes(1024)}},
		"uncompressed": {roundTripEntries(), []ocdbt.Option{ocdbt.WithoutCompression(), ocdbt.WithMaxDecodedNodeBytes(512), ocdbt.WithMaxInlineValueBytes(1024)}},
		"empty":        {map[string][]byte{}, nil},
	} {
		dir := filepath.Join(out, name)
		require.NoError(t, ocdbt.Write(dir, tc.entries, fixedOpts(tc.opts...)...))
		require.NoError(t, os.WriteFile(dir+".json", entriesJSON(t, tc.entries), 0o644))
	}
}

// entriesJSON encodes entries as the fixtures do ({key: base64 value}), keys as latin-1
// code points so that binary keys survive JSON.
func entriesJSON(t *testing.T, entries map[string][]byte) []byte {
	m := map[string]string{}
	for k, v := range entries {
		r := make([]rune, len(k))
		for i := range len(k) {
			r[i] = rune(k[i])
		}
		m[string(r)] = base64.StdEncoding.EncodeToString(v)
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}
