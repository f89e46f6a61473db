package ccsources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"b.c":           "",
		"a.h":           "abc",
		"README.md":     "not C",
		"include/x/y.h": "",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	// sha256("abc") and sha256("").
	want := "cc/a.h ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n" +
		"cc/b.c e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n" +
		"cc/include/x/y.h e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
	if got != want {
		t.Errorf("List:\n%s\nwant:\n%s", got, want)
	}
	src, err := File(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(src), "// Code generated") || !strings.Contains(string(src), "const ccSources = `\n"+want+"`\n") {
		t.Errorf("File:\n%s", src)
	}
}

func TestListErrors(t *testing.T) {
	if _, err := List(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .c or .h file") {
		t.Errorf("empty dir: err = %v", err)
	}
	if _, err := List(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing dir: no error")
	}
}
