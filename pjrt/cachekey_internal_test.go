package pjrt

import "testing"

// TestCompileCacheKeyFields: every part of the compile-cache key changes it on its own: the
// program, the options, the plugin's identity, the platform and its version, and each device's
// kind. Two real plugins also differ in their platform version, so TestCompileCacheTwoPlugins
// alone does not see a key that left out the plugin's identity.
func TestCompileCacheKeyFields(t *testing.T) {
	dev := func(kind string) []*Device { return []*Device{{info: deviceInfo{kind: kind}}} }
	base := func() (*compileCache, *Client, string, []byte, []*Device) {
		return &compileCache{plugin: "libcpu.so:123:abc"}, &Client{platform: "cpu", platformVersion: "0.1"},
			"module {}", []byte{1, 2}, dev("cpu")
	}
	cc, c, mlir, opts, devs := base()
	want := cc.key(c, mlir, opts, devs)
	if again := cc.key(c, mlir, opts, devs); again != want {
		t.Fatal("the key is not deterministic")
	}
	for name, change := range map[string]func(cc *compileCache, c *Client, mlir *string, opts *[]byte, devs *[]*Device){
		"program":          func(_ *compileCache, _ *Client, m *string, _ *[]byte, _ *[]*Device) { *m = "module { }" },
		"options":          func(_ *compileCache, _ *Client, _ *string, o *[]byte, _ *[]*Device) { *o = []byte{1, 3} },
		"plugin":           func(cc *compileCache, _ *Client, _ *string, _ *[]byte, _ *[]*Device) { cc.plugin = "libcpu.so:123:abd" },
		"platform":         func(_ *compileCache, c *Client, _ *string, _ *[]byte, _ *[]*Device) { c.platform = "cuda" },
		"platform version": func(_ *compileCache, c *Client, _ *string, _ *[]byte, _ *[]*Device) { c.platformVersion = "0.2" },
		"device kind":      func(_ *compileCache, _ *Client, _ *string, _ *[]byte, d *[]*Device) { *d = dev("gpu") },
		"device count": func(_ *compileCache, _ *Client, _ *string, _ *[]byte, d *[]*Device) {
			*d = append(dev("cpu"), dev("cpu")...)
		},
	} {
		cc, c, mlir, opts, devs := base()
		change(cc, c, &mlir, &opts, &devs)
		if cc.key(c, mlir, opts, devs) == want {
			t.Errorf("changing the %s leaves the key as it was", name)
		}
	}
}
