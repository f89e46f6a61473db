package ocdbt_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixtureDir holds the databases tools/oracle/ocdbt_fixtures.py made with tensorstore and
// Orbax (frozen: see frozen.sha256 there).
const fixtureDir = "../../testdata/ocdbt"

var fixtureNames = []string{"single", "uncompressed", "multilevel", "versions", "numbered", "orbax"}

type fixture struct {
	Files   map[string]string `json:"files"`
	Entries map[string]string `json:"entries"`
}

func loadFixture(t testing.TB, name string) (files, entries map[string][]byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtureDir, name+".json"))
	require.NoError(t, err)
	var f fixture
	require.NoError(t, json.Unmarshal(raw, &f))
	decode := func(m map[string]string) map[string][]byte {
		out := make(map[string][]byte, len(m))
		for k, v := range m {
			b, err := base64.StdEncoding.DecodeString(v)
			require.NoError(t, err, "%s: %s", name, k)
			out[k] = b
		}
		return out
	}
	return decode(f.Files), decode(f.Entries)
}

// writeFiles writes a fixture's files into a new directory and returns it.
func writeFiles(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for rel, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	return dir
}

func fixtureDB(t testing.TB, name string) (string, map[string][]byte) {
	files, entries := loadFixture(t, name)
	return writeFiles(t, files), entries
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestFixturesFrozen checks the fixtures against the hashes recorded when they were made:
// tensorstore names data files at random, so they are never regenerated or edited by hand.
func TestFixturesFrozen(t *testing.T) {
	f, err := os.Open(filepath.Join(fixtureDir, "frozen.sha256"))
	require.NoError(t, err)
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "line %q", sc.Text())
		raw, err := os.ReadFile(filepath.Join(fixtureDir, name))
		require.NoError(t, err)
		got := sha256.Sum256(raw)
		require.Equal(t, sum, hex.EncodeToString(got[:]), "%s changed: fixtures are frozen (tools/oracle/ocdbt_fixtures.py)", name)
		listed[name] = true
	}
	require.NoError(t, sc.Err())
	for _, n := range fixtureNames {
		require.True(t, listed[n+".json"], "%s.json not in frozen.sha256", n)
	}
}
