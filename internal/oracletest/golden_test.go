package oracletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// goldenDir is testdata/oracle at the repository root, relative to this package.
var goldenDir = filepath.Join("..", "..", "testdata", "oracle")

// goldenFile is one testdata/oracle/<group>.json as generate.py writes it.
type goldenFile[C any] struct {
	Group       string `json:"group"`
	JAXVersion  string `json:"jax_version"`
	JAXLib      string `json:"jaxlib_version"`
	FlaxVersion string `json:"flax_version"`
	Cases       []C    `json:"cases"`
}

// jaxError is the error JAX raised for a case.
type jaxError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// caseHead holds the fields every case has.
type caseHead struct {
	Name        string   `json:"name"`
	Src         string   `json:"src"`
	ExpectError bool     `json:"expect_error"`
	Kind        string   `json:"kind"`
	Phrases     []string `json:"phrases"`
}

// meshJSON is a mesh as the corpus writes it.
type meshJSON struct {
	Shape   []int    `json:"shape"`
	Names   []string `json:"names"`
	Devices []int    `json:"devices"`
	Types   []string `json:"types"`
}

// readGolden reads testdata/oracle/<group>.json into a T.
func readGolden[T any](t *testing.T, group string) T {
	t.Helper()
	var g T
	data, err := os.ReadFile(filepath.Join(goldenDir, group+".json"))
	if err != nil {
		t.Fatalf("oracle golden %s: %v (regenerate with `make oracle`)", group, err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("oracle golden %s: %v", group, err)
	}
	return g
}

// loadGolden reads testdata/oracle/<group>.json, a group of cases.
func loadGolden[C any](t *testing.T, group string) goldenFile[C] {
	t.Helper()
	g := readGolden[goldenFile[C]](t, group)
	if g.Group != group || g.JAXVersion == "" || len(g.Cases) == 0 {
		t.Fatalf("oracle golden %s: malformed (group %q, jax %q, %d cases)", group, g.Group, g.JAXVersion, len(g.Cases))
	}
	report.setVersion(g.JAXVersion, g.JAXLib, g.FlaxVersion)
	return g
}
