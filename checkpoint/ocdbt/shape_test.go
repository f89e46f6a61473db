package ocdbt

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// treeShape walks a database's latest B+tree and reports what the fixtures are meant to
// cover: node heights, indirect values, data file paths.
type treeShape struct {
	rootHeight     uint8
	nodes          int
	indirect       int
	inline         int
	files          map[string]bool // every data file path a node or value refers to
	bases          map[string]bool // base paths of the data files nodes refer to
	compressed     bool
	versionNodes   int
	manifestConfig config
}

func shapeOf(t *testing.T, name string) treeShape {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../testdata/ocdbt", name+".json"))
	require.NoError(t, err)
	var f struct{ Files map[string]string }
	require.NoError(t, json.Unmarshal(raw, &f))
	dir := t.TempDir()
	for rel, b64 := range f.Files {
		b, err := base64.StdEncoding.DecodeString(b64)
		require.NoError(t, err)
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	db, err := Open(dir)
	require.NoError(t, err)
	defer db.Close()
	s := treeShape{rootHeight: db.latest.rootHeight, files: map[string]bool{}, bases: map[string]bool{},
		versionNodes: len(db.manifest.nodes), manifestConfig: db.conf}
	var walk func(r ref, h uint8)
	walk = func(r ref, h uint8) {
		s.files[r.file.path()] = true
		raw, err := db.read(r, "test")
		require.NoError(t, err)
		s.compressed = raw[12] == 0 && raw[13] == 1
		n, err := decodeBtreeNode(raw, "test", r.file.base)
		require.NoError(t, err)
		require.Equal(t, h, n.height)
		s.nodes++
		for _, v := range n.values {
			if v.indirect {
				s.indirect++
				s.files[v.loc.file.path()] = true
				s.bases[v.loc.file.base] = true
			} else {
				s.inline++
			}
		}
		for _, c := range n.children {
			s.bases[c.loc.file.base] = true
			walk(c.loc, h-1)
		}
	}
	walk(db.latest.root, db.latest.rootHeight)
	return s
}

func TestFixtureShapes(t *testing.T) {
	s := shapeOf(t, "single")
	t.Logf("single: %+v", s)
	require.True(t, s.compressed)
	require.Positive(t, s.indirect)
	require.Positive(t, s.inline)

	s = shapeOf(t, "uncompressed")
	t.Logf("uncompressed: %+v", s)
	require.False(t, s.compressed)
	require.False(t, s.manifestConfig.compress)
	require.Positive(t, s.indirect)

	s = shapeOf(t, "multilevel")
	t.Logf("multilevel: root height %d, %d nodes", s.rootHeight, s.nodes)
	require.GreaterOrEqual(t, s.rootHeight, uint8(2))

	s = shapeOf(t, "versions")
	t.Logf("versions: %+v", s)
	require.Positive(t, s.versionNodes)

	s = shapeOf(t, "orbax")
	t.Logf("orbax: %+v", s)
	require.True(t, s.bases["ocdbt.process_0/"])
}
