// Package bazel holds the scripts of the Bazel build (see docs/bazel.md) and this test, which
// makes `go test ./...` (and so `make test`) fail as soon as the committed Bazel files fall
// behind the Go sources: a .go file added, removed or renamed without regenerating the
// BUILD.bazel files, or a module added to the build without regenerating go_deps.bzl.
//
// It reads the tree with the standard library only, so it needs neither Bazel nor gazelle;
// `make bazel` runs the exact check (gazelle -mode=diff), which also sees changed imports.
package bazel

import (
	"bufio"
	"bytes"
	"fmt"
	"go/build/constraint"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const hint = "run tools/bazel/gazelle.sh (it builds gazelle into the cache on first use) and commit the BUILD.bazel files and tools/bazel/go_deps.bzl it writes"

// repoRoot is the checkout this test belongs to; go test runs it in tools/bazel.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("tools/bazel: no go.mod at the repository root %s: %v", root, err)
	}
	return root
}

// excludes returns the exact paths excluded by the root BUILD.bazel's `# gazelle:exclude`
// directives. The patterns **/_* and **/.* say what the go command ignores anyway, and the
// walk below skips those names; any other pattern needs teaching to this test.
func excludes(t *testing.T, root string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "BUILD.bazel"))
	if err != nil {
		t.Fatalf("tools/bazel: %v", err)
	}
	ex := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "# gazelle:exclude ")
		if !ok {
			continue
		}
		switch p = strings.TrimSpace(p); {
		case p == "**/_*" || p == "**/.*":
		case strings.ContainsAny(p, "*?["):
			t.Fatalf("tools/bazel: BUILD.bazel: exclude pattern %q is not understood by buildfiles_test.go; teach it", p)
		default:
			ex[p] = true
		}
	}
	return ex
}

// sourceExts are the files gazelle lists in srcs.
var sourceExts = []string{".go", ".c", ".h", ".s", ".S", ".cc", ".cpp", ".cxx", ".hh", ".hpp"}

// ignored reports whether a .go file is never built (a `//go:build ignore` file).
func ignored(file string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if constraint.IsGoBuild(line) {
			// Gazelle lists a file some build can compile (race or !race), and leaves out one
			// no build compiles ("ignore"): true for every tag but ignore, and for none.
			expr, err := constraint.Parse(line)
			return err == nil && !expr.Eval(func(tag string) bool { return tag != "ignore" }) &&
				!expr.Eval(func(string) bool { return false })
		}
	}
	return false
}

// tree is what the walk of the checkout found: per directory (slash path relative to the root,
// "" for the root) the source files gazelle lists there, and the directories with a BUILD.bazel
// that declares Go rules.
type tree struct {
	sources map[string][]string
	goBuild map[string]bool
}

// walk reads the checkout as gazelle sees it with the root BUILD.bazel's directives.
func walk(t *testing.T, root string) tree {
	t.Helper()
	ex := excludes(t, root)
	tr := tree{sources: map[string][]string{}, goBuild: map[string]bool{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		dir, name := path.Split(rel)
		dir = strings.TrimSuffix(dir, "/")
		hidden := strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if hidden || name == "testdata" || ex[rel] {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !d.Type().IsRegular() || hidden || ex[rel] {
			return nil
		}
		switch ext := path.Ext(name); {
		case name == "BUILD.bazel":
			if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte("go_library(")) {
				tr.goBuild[dir] = true
			}
		case slices.Contains(sourceExts, ext) && !(ext == ".go" && ignored(p)):
			tr.sources[dir] = append(tr.sources[dir], name)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("tools/bazel: walking %s: %v", root, err)
	}
	return tr
}

// quoted finds the file names a BUILD file lists.
var quoted = regexp.MustCompile(`"([^"/:]+\.(?:go|c|h|s|S|cc|cpp|cxx|hh|hpp))"`)

// TestBuildFilesListSources checks that every directory of Go (and cgo) sources has a
// BUILD.bazel listing each of its source files, and that no BUILD.bazel of a Go package lists
// a file that is gone.
func TestBuildFilesListSources(t *testing.T) {
	root := repoRoot(t)
	tr := walk(t, root)
	var stale []string
	for dir, files := range tr.sources {
		if !slices.ContainsFunc(files, func(f string) bool { return path.Ext(f) == ".go" }) {
			continue // C alone is no Go package; gazelle leaves such directories (cc/) alone
		}
		build := path.Join(dir, "BUILD.bazel")
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(build)))
		if err != nil {
			stale = append(stale, fmt.Sprintf("%s is missing (the directory has %s)", build, strings.Join(files, ", ")))
			continue
		}
		listed := map[string]bool{}
		for _, m := range quoted.FindAllStringSubmatch(string(data), -1) {
			listed[m[1]] = true
		}
		for _, f := range files {
			if !listed[f] {
				stale = append(stale, fmt.Sprintf("%s does not list %s", build, f))
			}
		}
		for f := range listed {
			if !slices.Contains(files, f) && path.Ext(f) == ".go" {
				stale = append(stale, fmt.Sprintf("%s lists %s, which does not exist", build, f))
			}
		}
	}
	for dir := range tr.goBuild {
		if !slices.ContainsFunc(tr.sources[dir], func(f string) bool { return path.Ext(f) == ".go" }) {
			stale = append(stale, fmt.Sprintf("%s has Go rules, but ./%s has no Go files", path.Join(dir, "BUILD.bazel"), dir))
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		t.Errorf("tools/bazel: the BUILD.bazel files are stale:\n\t%s\n%s", strings.Join(stale, "\n\t"), hint)
	}
}

// TestGoDepsCurrent checks that tools/bazel/go_deps.bzl declares exactly the modules (and
// versions, and go.sum hashes) of the packages and tests of the module.
func TestGoDepsCurrent(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("tools/bazel: go list -deps -test ./...: %s", msg)
	}
	sums := map[string]string{}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(gosum), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			sums[f[0]+" "+f[1]] = f[2]
		}
	}
	want := map[string]bool{}
	for _, mod := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if mod != "" {
			want[mod+" "+sums[mod]] = true
		}
	}

	decl := regexp.MustCompile(`importpath = "([^"]+)", version = "([^"]+)", sum = "([^"]+)"`)
	data, err := os.ReadFile(filepath.Join(root, "tools", "bazel", "go_deps.bzl"))
	if err != nil {
		t.Fatalf("tools/bazel: %v; %s", err, hint)
	}
	got := map[string]bool{}
	for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
		got[m[1]+" "+m[2]+" "+m[3]] = true
	}
	var diff []string
	for m := range want {
		if !got[m] {
			diff = append(diff, "missing: "+m)
		}
	}
	for m := range got {
		if !want[m] {
			diff = append(diff, "not needed: "+m)
		}
	}
	slices.Sort(diff)
	if len(diff) > 0 {
		t.Errorf("tools/bazel: tools/bazel/go_deps.bzl is stale:\n\t%s\n%s", strings.Join(diff, "\n\t"), hint)
	}
}
