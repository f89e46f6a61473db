package plugins

import (
	"errors"
	"testing"
)

func TestLookupAndDir(t *testing.T) {
	for _, p := range Known {
		got, err := Lookup(p.Name)
		if err != nil || got != p {
			t.Errorf("Lookup(%q) = %v, %v", p.Name, got, err)
		}
	}
	if _, err := Lookup("gpu"); !errors.Is(err, ErrUnknownPlugin) {
		t.Errorf("Lookup(gpu): %v", err)
	}
	t.Setenv(EnvCacheDir, "/some/dir")
	if d, err := Dir(); err != nil || d != "/some/dir" {
		t.Errorf("Dir() = %q, %v", d, err)
	}
	t.Setenv(EnvCacheDir, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, err := Dir(); err != nil || d != "/xdg/xlamesh" {
		t.Errorf("Dir() = %q, %v", d, err)
	}
}
