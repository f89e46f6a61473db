package plugins

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCheckoutCache(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	write("repo/go.mod", "// a comment\nmodule github.com/xlamesh/xlamesh\n\ngo 1.26\n")
	must(t, os.MkdirAll(filepath.Join(root, "repo", ".cache"), 0o755))
	write("repo/examples/own/go.mod", "module example.com/own\n") // a module nested in the checkout
	must(t, os.MkdirAll(filepath.Join(root, "repo", "examples", "own", "sub"), 0o755))
	write("bare/go.mod", "module \"github.com/xlamesh/xlamesh\"\n") // a checkout without .cache
	write("user/go.mod", "module github.com/xlamesh/xlamesh-fork\n")
	must(t, os.MkdirAll(filepath.Join(root, "fifo"), 0o755))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo", "go.mod"), 0o644))
	for dir, want := range map[string]string{
		"repo":                  filepath.Join(root, "repo", ".cache"),
		"repo/examples/own/sub": filepath.Join(root, "repo", ".cache"),
		"bare":                  "",
		"user":                  "",
		"fifo":                  "", // read without blocking, and not a go.mod
	} {
		t.Run(dir, func(t *testing.T) {
			t.Chdir(filepath.Join(root, dir))
			if got := CheckoutCache(); got != want {
				t.Errorf("CheckoutCache() in %s = %q, want %q", dir, got, want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
