// Package install fetches PJRT plugins from their PyPI wheels into the user's cache, in pure Go:
// no Python, no pip. It is what `xlamesh install-plugin` and the repository's `make setup` run.
//
// In xlamesh's data flow it sits between the plugin table and the binding: package pjrt/plugins
// names the pinned plugins and says where each one's file goes (plugins.Known, plugins.Dir,
// Plugin.Path); this package downloads and unpacks it there; package pjrt loads it from there.
// It is a command-side package: pjrt does not import it, so programs that only open clients do
// not link its net/http and archive/zip. It imports no other xlamesh package but pjrt/plugins
// and internal/regfile.
//
// # Pins
//
// Install reads the wheel's URL and sha256 from the package index's JSON API
// (https://pypi.org/pypi/NAME/json), refuses a wheel whose sha256 differs from the pin of the
// plugins.Plugin (or from the index, for an unpinned version), downloads it with progress,
// verifies it, and unpacks the plugin's .so into p.Path(dir), dir/plugins/NAME-VERSION/.
// Installing is idempotent: a plugin file is kept when its stamp names the pinned wheel and the
// file still has the size and sha256 recorded when it was installed (and pinned in
// plugins.Known); a missing, truncated or altered one is downloaded again. Verify makes the same
// check without the network.
//
//	p, err := plugins.Lookup("cpu")
//	if err != nil { ... }
//	dir, err := plugins.Dir()
//	if err != nil { ... }
//	path, err := install.Install(ctx, p, dir, install.Options{Progress: os.Stderr})
package install
