package pjrt

// #include "xlamesh_pjrt.h"
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
)

// EnvCompileCache names the environment variable that turns on the persistent compile cache
// for every client opened without WithCompileCache: the directory to keep executables in.
const EnvCompileCache = "XLAMESH_COMPILE_CACHE"

// WithCompileCache keeps compiled executables in dir (created if missing), so that a later
// client of the same plugin version, in this process or another, loads a program it compiled
// before instead of compiling it again. The default is $XLAMESH_COMPILE_CACHE, or no cache; an
// empty dir turns the cache off. The key covers the program text, the compile options (devices,
// partitioner), the plugin's path, API version and attributes, the platform version and the
// device kinds. An entry that cannot be read or loaded is a logged miss, never an error. A
// plugin without PJRT_Executable_Serialize or DeserializeAndLoad turns the cache off, with a
// logged reason.
func WithCompileCache(dir string) Option {
	return func(c *openConfig) { c.cacheDir, c.cacheSet = dir, true }
}

// CompileStats counts what Compile did on a client.
type CompileStats struct {
	Compiles    int64 // programs the plugin compiled
	CacheHits   int64 // programs loaded from the persistent cache instead
	CacheMisses int64 // cache look-ups that found nothing usable (absent, unreadable or not loadable)
	CacheWrites int64 // executables written to the cache
}

type compileStats struct{ compiles, hits, misses, writes atomic.Int64 }

// CompileStats returns the client's compile and cache counts.
func (c *Client) CompileStats() CompileStats {
	return CompileStats{Compiles: c.stats.compiles.Load(), CacheHits: c.stats.hits.Load(),
		CacheMisses: c.stats.misses.Load(), CacheWrites: c.stats.writes.Load()}
}

// compileCache is a directory of serialized executables, one file per key.
type compileCache struct{ dir string }

func openCompileCache(cfg openConfig) (*compileCache, error) {
	dir := cfg.cacheDir
	if !cfg.cacheSet {
		dir = os.Getenv(EnvCompileCache)
	}
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pjrt: compile cache: %w", err)
	}
	return &compileCache{dir: dir}, nil
}

// key hashes everything that decides what the compiler produces.
func (cc *compileCache) key(c *Client, mlir string, options []byte, devices []*Device) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field("xlamesh-compile-cache-v1")
	field(mlir)
	field(string(options))
	field(c.plugin.Path())
	field(fmt.Sprintf("%d.%d", c.api.major, c.api.minor))
	attrs := c.plugin.Attributes()
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		field(fmt.Sprintf("%s=%v", k, attrs[k]))
	}
	field(c.platform)
	field(c.platformVersion)
	for _, d := range devices {
		field(d.Kind())
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (cc *compileCache) path(key string) string { return filepath.Join(cc.dir, key+".xlaexec") }

// cacheUsable reports whether the plugin can serialize and load executables, logging why not.
func (c *Client) cacheUsable() bool {
	for _, f := range []fn{fnExecutableSerialize, fnExecutableDeserialize} {
		if !c.api.has(f) {
			c.logger.Warn("pjrt: compile cache off: the plugin lacks "+f.name, "plugin", c.plugin.Path())
			c.cache = nil
			return false
		}
	}
	return true
}

// loadCached returns the executable cached under key, or nil (a miss, logged when an entry
// existed but could not be used).
func (c *Client) loadCached(key string, options []byte) *C.PJRT_LoadedExecutable {
	if !c.cacheUsable() {
		return nil
	}
	path := c.cache.path(key)
	data, err := os.ReadFile(path)
	if err != nil {
		c.stats.misses.Add(1)
		if !errors.Is(err, fs.ErrNotExist) {
			c.logger.Warn("pjrt: compile cache miss: cannot read entry", "path", path, "err", err)
		}
		return nil
	}
	if len(data) == 0 {
		c.stats.misses.Add(1)
		c.logger.Warn("pjrt: compile cache miss: empty entry", "path", path)
		return nil
	}
	loaded, err := c.deserialize(data, options)
	if err != nil {
		c.stats.misses.Add(1)
		c.logger.Warn("pjrt: compile cache miss: entry does not load", "path", path, "err", err)
		return nil
	}
	c.stats.hits.Add(1)
	return loaded
}

// storeCached writes e's serialization under key atomically (a temporary file renamed into
// place); a failure is logged and otherwise ignored.
func (c *Client) storeCached(key string, e *Executable) {
	if c.cache == nil {
		return
	}
	data, err := e.Serialize()
	if err != nil {
		c.logger.Warn("pjrt: compile cache: cannot serialize executable", "err", err)
		return
	}
	tmp, err := os.CreateTemp(c.cache.dir, "."+key+".*.tmp")
	if err != nil {
		c.logger.Warn("pjrt: compile cache: cannot write entry", "err", err)
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(tmp.Name(), c.cache.path(key))
	}
	if werr != nil || cerr != nil {
		_ = os.Remove(tmp.Name())
		c.logger.Warn("pjrt: compile cache: cannot write entry", "err", errors.Join(werr, cerr))
		return
	}
	c.stats.writes.Add(1)
}
