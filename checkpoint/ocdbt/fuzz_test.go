package ocdbt

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fixtureObjects returns the encoded manifests, version tree nodes and B+tree nodes of the
// tensorstore-written fixtures, as fuzz seeds.
func fixtureObjects(f *testing.F) [][]byte {
	var out [][]byte
	names, _ := filepath.Glob("../../testdata/ocdbt/*.json")
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var fx struct{ Files map[string]string }
		if err := json.Unmarshal(raw, &fx); err != nil {
			f.Fatal(err)
		}
		dir := f.TempDir()
		for rel, b64 := range fx.Files {
			b, _ := base64.StdEncoding.DecodeString(b64)
			p := filepath.Join(dir, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, b, 0o644)
			if filepath.Base(rel) == ManifestName || filepath.Dir(rel) == "." && len(rel) == len("manifest.0000000000000001") {
				out = append(out, b)
			}
		}
		db, err := Open(dir)
		if err != nil {
			f.Fatal(err)
		}
		var walk func(r ref)
		walk = func(r ref) {
			raw, err := db.read(r, "seed")
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, raw)
			n, err := decodeBtreeNode(raw, "seed", r.file.base)
			if err != nil {
				f.Fatal(err)
			}
			for _, c := range n.children {
				walk(c.loc)
			}
		}
		if !db.latest.root.missing() {
			walk(db.latest.root)
		}
		for _, r := range db.manifest.nodes {
			raw, err := db.read(r.loc, "seed")
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, raw)
		}
		db.Close()
	}
	return out
}

// FuzzDecode feeds mutated manifests and nodes to the decoders, which must return an error
// or a value, never panic or allocate without bound. Each input is decoded as it is (the
// envelope checks) and again with its length and checksum fixed (the body decoders, as
// most mutations would otherwise stop at the checksum). A B+tree node that decodes must
// encode and decode to the same keys and values.
func FuzzDecode(f *testing.F) {
	for _, b := range fixtureObjects(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		decodeAll(t, raw)
		if len(raw) >= 16 {
			fixed := slices.Clone(raw)
			binary.LittleEndian.PutUint64(fixed[4:], uint64(len(fixed)))
			binary.LittleEndian.PutUint32(fixed[len(fixed)-4:], crc32.Checksum(fixed[:len(fixed)-4], castagnoli))
			decodeAll(t, fixed)
		}
	})
}

func decodeAll(t *testing.T, raw []byte) {
	decodeManifest(raw, "m")
	decodeVersionNode(raw, "v", "base/")
	decodeBtreeNode(raw, "n", "base/")
	// The encoder writes each data file's whole base path: a node it writes is read with
	// an empty transitive path, as the nodes Write makes are.
	n, err := decodeBtreeNode(raw, "n", "")
	if err != nil {
		return
	}
	c := testConf
	enc, err := encodeBtreeNode(n, &c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeBtreeNode(enc, "re-encoded", "")
	if err != nil {
		t.Fatalf("re-encoded node does not decode: %v", err)
	}
	if !slices.Equal(n.keys, m.keys) || len(n.values) != len(m.values) || len(n.children) != len(m.children) {
		t.Fatalf("re-encoded node differs")
	}
	for i := range n.values {
		a, b := n.values[i], m.values[i]
		if a.indirect != b.indirect || string(a.inline) != string(b.inline) || a.loc != b.loc {
			t.Fatalf("value %d differs after re-encoding: %+v vs %+v", i, a, b)
		}
	}
	for i := range n.children {
		if n.children[i] != m.children[i] {
			t.Fatalf("child %d differs after re-encoding: %+v vs %+v", i, n.children[i], m.children[i])
		}
	}
}
