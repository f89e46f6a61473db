// Package layout holds the test that keeps the README's list of the package graph's arrows
// true: it reads which xlamesh packages each library package imports (go list) and fails when
// the list between the README's arrows markers says otherwise. `go test ./tools/layout -update`
// rewrites the list. It needs the go command and the module, so Bazel does not run it (see the
// root BUILD.bazel).
package layout

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's arrows list from go list")

const (
	module = "github.com/xlamesh/xlamesh/"
	begin  = "<!-- arrows: written by `go test ./tools/layout -update` from `go list`; the test fails when it drifts -->\n"
	end    = "<!-- end of arrows -->\n"
)

// library reports whether a package is part of the library's graph: not a command, an example
// or a tool of the repository.
func library(pkg string) bool {
	for _, p := range []string{"cmd/", "examples", "tools/"} {
		if strings.HasPrefix(pkg, p) {
			return false
		}
	}
	return true
}

// arrows returns the list: one line per library package, the xlamesh packages it imports.
func arrows(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		if f[0] == strings.TrimSuffix(module, "/") || !library(pkg) {
			continue
		}
		var deps []string
		for _, imp := range f[1:] {
			if d, ok := strings.CutPrefix(imp, module); ok {
				deps = append(deps, d)
			}
		}
		slices.Sort(deps)
		for k, d := range deps {
			deps[k] = "`" + d + "`"
		}
		b.WriteString("- `" + pkg + "`")
		if len(deps) == 0 {
			b.WriteString(": no other xlamesh package\n")
		} else {
			b.WriteString(" imports " + strings.Join(deps, ", ") + "\n")
		}
	}
	return b.String()
}

// TestREADMEArrows: the README lists every library package with the xlamesh packages it
// imports, as go list says.
func TestREADMEArrows(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(readme, []byte(begin))
	j := bytes.Index(readme, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("README.md: no arrows list between %q and %q", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	got := string(readme[i+len(begin) : j])
	want := arrows(t, root)
	if got == want {
		return
	}
	if *update {
		out := slices.Concat(readme[:i+len(begin)], []byte(want), readme[j:])
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("README.md: arrows list rewritten")
		return
	}
	t.Errorf("README.md's arrows list differs from go list; run `go test ./tools/layout -update`.\nREADME:\n%s\ngo list:\n%s", got, want)
}
