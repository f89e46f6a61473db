package jaxexport

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// corpus returns the artifacts of the oracle's programs corpus as JAX 0.12 (programs.json)
// and JAX 0.8.1 (programs081.json) exported the same programs, by "file:program", with each
// program's mesh size and argument and result counts.
func corpus(t testing.TB) (names []string, artifacts map[string][]byte, want map[string][3]int) {
	t.Helper()
	artifacts, want = map[string][]byte{}, map[string][3]int{}
	for _, file := range []string{"programs.json", "programs081.json"} {
		names = append(names, corpusFile(t, file, artifacts, want)...)
	}
	return names, artifacts, want
}

func corpusFile(t testing.TB, file string, artifacts map[string][]byte, want map[string][3]int) (names []string) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", file))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Programs []struct {
			Name     string
			Exported string
			Mesh     struct{ Shape []int }
			Inputs   []json.RawMessage
			Outputs  []json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Programs {
		raw, err := base64.StdEncoding.DecodeString(p.Exported)
		if err != nil {
			t.Fatal(err)
		}
		n := 1
		for _, s := range p.Mesh.Shape {
			n *= s
		}
		name := file + ":" + p.Name
		names = append(names, name)
		artifacts[name], want[name] = raw, [3]int{n, len(p.Inputs), len(p.Outputs)}
	}
	return names
}

// TestReadCorpus reads every artifact JAX wrote for the programs corpus.
func TestReadCorpus(t *testing.T) {
	names, artifacts, want := corpus(t)
	if len(names) == 0 {
		t.Fatal("empty corpus")
	}
	for _, name := range names {
		e, err := Read(artifacts[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		w := want[name]
		if e.FunctionName() == "" {
			t.Errorf("%s: no function name", name)
		}
		if e.NrDevices() != w[0] || len(e.InAvals()) != w[1] || len(e.OutAvals()) != w[2] || len(e.InShardings()) != w[1] ||
			!slices.Equal(e.Platforms(), []string{"cpu"}) || len(e.Module()) < 4 || string(e.Module()[:4]) != "ML\xefR" {
			t.Errorf("%s: read %v with %d devices, %d in shardings, module %d bytes; want %d devices, %d in, %d out",
				name, e, e.NrDevices(), len(e.InShardings()), len(e.Module()), w[0], w[1], w[2])
		}
		for i, s := range e.InShardings() {
			if !s.Specified() {
				t.Errorf("%s: in_shardings[%d] unspecified", name, i)
			}
		}
	}
}
