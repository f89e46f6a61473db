// Package install fetches PJRT plugins from their PyPI wheels into the user's cache, in pure Go:
// no Python, no pip. It is what `xlamesh install-plugin` and the repository's `make setup` run,
// and where pjrt.Open looks by default.
//
// In xlamesh's data flow it comes before everything else: it puts a plugin file on disk, which
// package pjrt then loads. It imports no other xlamesh package but internal/regfile.
//
// # Pins
//
// Known lists the plugins xlamesh is tested with, each pinned by PyPI version and wheel sha256.
// Install reads the wheel's URL and sha256 from the package index's JSON API
// (https://pypi.org/pypi/NAME/json), refuses a wheel whose sha256 differs from the pin (or from
// the index, for an unpinned version), downloads it with progress, verifies it, and unpacks the
// plugin's .so into Dir()/plugins/NAME-VERSION/. Installing is idempotent: a plugin file is kept
// when its stamp names the pinned wheel and the file still has the size and sha256 recorded when
// it was installed (and pinned in Known); a missing, truncated or altered one is downloaded again.
// Verify makes the same check without the network.
//
// # Where
//
// Dir is $XLAMESH_CACHE_DIR when set, else os.UserCacheDir()/xlamesh (~/.cache/xlamesh on Linux).
package install
