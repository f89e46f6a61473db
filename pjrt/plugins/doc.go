// Package plugins names and finds the PJRT plugin files xlamesh is tested with: the table of
// pinned plugins (Known, Lookup), the cache directory they are installed under (Dir,
// CheckoutCache) and the path of each plugin file in it (Plugin.Path). It reads paths and
// environment variables only: no networking, no archives, no cgo.
//
// In xlamesh's data flow it comes first: this package names and finds plugin files, package
// pjrt/install downloads them (for `xlamesh install-plugin` and the repository's `make setup`),
// and package pjrt loads them. pjrt imports this package, never the installer, so a program that
// opens a client does not link net/http or archive/zip. It imports no other xlamesh package but
// internal/regfile.
//
// # Pins
//
// Each Plugin of Known is pinned by its PyPI project and version, the sha256 of its wheel for
// x86-64 Linux, the plugin file's path inside the wheel and, for some, the plugin file's own size
// and sha256. Lookup finds one by its short name ("cpu", "cpu-0.81", "cuda12", "cuda13", "tpu")
// or a former name of it, and fails with an error wrapping ErrUnknownPlugin otherwise.
//
// # Where
//
// Dir is $XLAMESH_CACHE_DIR when set, else os.UserCacheDir()/xlamesh (~/.cache/xlamesh on Linux).
// A plugin p lives at p.Path(dir): dir/plugins/PACKAGE-VERSION/FILE.so. CheckoutCache is the
// .cache directory of the xlamesh checkout the process runs in, where `make setup` installs.
//
//	p, err := plugins.Lookup("cpu")
//	if err != nil { ... }
//	dir, err := plugins.Dir()
//	if err != nil { ... }
//	path := p.Path(dir) // what pjrt.LoadPlugin loads; install.Install puts it there
package plugins
