package pjrt

// #include "xlamesh_pjrt.h"
import "C"

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// EnvCompileCache names the environment variable that turns on the persistent compile cache
// for every client opened without WithCompileCache: the directory to keep executables in.
const EnvCompileCache = "XLAMESH_COMPILE_CACHE"

// MaxCompileCacheEntry is the size in bytes of the largest compile cache entry a client reads;
// a larger file is a logged miss, not read.
const MaxCompileCacheEntry = 1 << 30

// WithCompileCache keeps compiled executables in dir (created if missing), so that a later
// client of the same plugin, in this process or another, loads a program it compiled before
// instead of compiling it again. The default is $XLAMESH_COMPILE_CACHE, or no cache; an empty
// dir turns the cache off.
//
// The key covers the program text, the compile options (devices, partitioner), the plugin's
// identity (the file name and size of its library and a hash of its first and last 64 KiB, its
// API version and attributes, the platform name and version, the device kinds) and the host's
// CPU features. Each entry starts with a header (magic, format version, the key, the payload's
// length and SHA-256) that is checked before the plugin sees the payload, and only a regular
// file of at most MaxCompileCacheEntry bytes is read. An entry that is absent, not a regular
// file, too large, truncated, of an older format, of another key (another program, another
// plugin, another machine), whose payload does not match its checksum, or that the plugin does
// not load is a logged miss, never an error: the program is compiled and the entry rewritten
// atomically. The checksum guards against damage and mix-ups, not against someone who can write
// the directory and forges entries: keep the directory as private as the plugin itself.
// A plugin without PJRT_Executable_Serialize or DeserializeAndLoad turns the cache off, with a
// logged reason.
func WithCompileCache(dir string) Option {
	return func(c *openConfig) { c.cacheDir, c.cacheSet = dir, true }
}

// CompileStats counts what Compile did on a client.
type CompileStats struct {
	Compiles    int64 // programs the plugin compiled
	CacheHits   int64 // programs loaded from the persistent cache instead
	CacheMisses int64 // cache look-ups that found nothing usable (absent or rejected)
	CacheWrites int64 // executables written to the cache
	// CacheRejects counts the misses that found an entry and refused it (not a regular file,
	// too large, a bad header, key or checksum, or an entry the plugin does not load).
	CacheRejects int64
}

type compileStats struct{ compiles, hits, misses, writes, rejects atomic.Int64 }

// CompileStats returns the client's compile and cache counts.
func (c *Client) CompileStats() CompileStats {
	return CompileStats{Compiles: c.stats.compiles.Load(), CacheHits: c.stats.hits.Load(),
		CacheMisses: c.stats.misses.Load(), CacheWrites: c.stats.writes.Load(), CacheRejects: c.stats.rejects.Load()}
}

// compileCache is a directory of serialized executables, one file per key, each behind a
// header (entryHeader).
type compileCache struct {
	dir    string
	plugin string // the plugin's path-independent identity, part of every key
}

func openCompileCache(cfg openConfig, p *Plugin) (*compileCache, error) {
	dir := cfg.cacheDir
	if !cfg.cacheSet {
		dir = os.Getenv(EnvCompileCache)
	}
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pjrt: compile cache %s: %w", dir, err)
	}
	id, err := pluginIdentity(p)
	if err != nil {
		cfg.logger.Warn("pjrt: compile cache off: cannot identify the plugin", "dir", dir, "err", err)
		return nil, nil
	}
	return &compileCache{dir: dir, plugin: id}, nil
}

// pluginIdentity names the plugin without its path: the library's file name and size, a hash of
// its first and last 64 KiB, its API version and attributes.
func pluginIdentity(p *Plugin) (string, error) {
	f, err := os.Open(p.Path())
	if err != nil {
		return "", fmt.Errorf("plugin %s: %w", p.Path(), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("plugin %s: %w", p.Path(), err)
	}
	const sample = 64 << 10
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, sample)); err != nil {
		return "", fmt.Errorf("plugin %s: %w", p.Path(), err)
	}
	if _, err := io.Copy(h, io.NewSectionReader(f, max(0, st.Size()-sample), sample)); err != nil {
		return "", fmt.Errorf("plugin %s: %w", p.Path(), err)
	}
	var b strings.Builder
	major, minor := p.APIVersion()
	fmt.Fprintf(&b, "%s size=%d sample=%x api=%d.%d", filepath.Base(p.Path()), st.Size(), h.Sum(nil), major, minor)
	attrs := p.Attributes()
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, " %q=%v", k, attrs[k])
	}
	return b.String(), nil
}

// hostCPU returns the host's architecture and CPU feature flags (the first "flags" or
// "Features" line of /proc/cpuinfo, sorted), read once: an executable compiled for one CPU may
// use instructions another lacks.
var hostCPU = sync.OnceValue(func() string {
	id := runtime.GOOS + "/" + runtime.GOARCH
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return id + " features unknown"
	}
	for line := range strings.Lines(string(data)) {
		name, value, ok := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); ok && (name == "flags" || name == "Features") {
			f := strings.Fields(value)
			sort.Strings(f)
			return id + " " + strings.Join(f, " ")
		}
	}
	return id + " features unknown"
})

// cacheFormat is the version of the entry format and of the key's composition.
const cacheFormat = 2

// key hashes everything that decides what the compiler produces; the hex form names the entry.
func (cc *compileCache) key(c *Client, mlir string, options []byte, devices []*Device) [sha256.Size]byte {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(fmt.Sprintf("xlamesh-compile-cache-v%d", cacheFormat))
	field(mlir)
	field(string(options))
	field(cc.plugin)
	field(c.platform)
	field(c.platformVersion)
	for _, d := range devices {
		field(d.Kind())
	}
	field(hostCPU())
	return [sha256.Size]byte(h.Sum(nil))
}

func (cc *compileCache) path(key [sha256.Size]byte) string {
	return filepath.Join(cc.dir, hex.EncodeToString(key[:])+".xlaexec")
}

// An entry is entryHeader followed by the payload, the plugin's serialized executable:
//
//	magic   [8]byte   "XMCACHE\n"
//	format  uint32    cacheFormat, little-endian
//	key     [32]byte  the entry's key
//	length  uint64    the payload's length in bytes, little-endian
//	sum     [32]byte  the payload's SHA-256
const (
	entryMagic     = "XMCACHE\n"
	entryHeaderLen = 8 + 4 + sha256.Size + 8 + sha256.Size
)

// encodeEntry returns payload behind its header.
func encodeEntry(key [sha256.Size]byte, payload []byte) []byte {
	out := make([]byte, 0, entryHeaderLen+len(payload))
	out = append(out, entryMagic...)
	out = binary.LittleEndian.AppendUint32(out, cacheFormat)
	out = append(out, key[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	sum := sha256.Sum256(payload)
	out = append(out, sum[:]...)
	return append(out, payload...)
}

// decodeEntry returns the payload of entry if its header is whole, of this format and key, and
// its payload has the header's length and checksum; otherwise why not.
func decodeEntry(key [sha256.Size]byte, entry []byte) ([]byte, error) {
	if len(entry) < entryHeaderLen {
		return nil, fmt.Errorf("%d bytes, shorter than the %d-byte header", len(entry), entryHeaderLen)
	}
	h := entry[:entryHeaderLen]
	if string(h[:8]) != entryMagic {
		return nil, errors.New("no entry header (another format, or damaged)")
	}
	if v := binary.LittleEndian.Uint32(h[8:12]); v != cacheFormat {
		return nil, fmt.Errorf("entry format %d, want %d", v, cacheFormat)
	}
	if !bytes.Equal(h[12:12+sha256.Size], key[:]) {
		return nil, errors.New("the entry is of another key (program, options, plugin or host)")
	}
	payload := entry[entryHeaderLen:]
	if n := binary.LittleEndian.Uint64(h[12+sha256.Size : 20+sha256.Size]); n != uint64(len(payload)) {
		return nil, fmt.Errorf("the header gives %d payload bytes, the entry has %d", n, len(payload))
	}
	if sum := sha256.Sum256(payload); !bytes.Equal(h[20+sha256.Size:], sum[:]) {
		return nil, errors.New("the payload does not match its checksum")
	}
	return payload, nil
}

// errNoEntry: the cache holds nothing under the key.
var errNoEntry = errors.New("no entry")

// readEntry reads the file at path if it is a regular file (a symbolic link to one is followed)
// of at most limit bytes, never blocking on a FIFO or opening a device.
func readEntry(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoEntry
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", st.Mode().Type())
	}
	// O_NONBLOCK: should the path have become a FIFO since, opening it does not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", st.Mode().Type())
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%d bytes, more than the limit of %d", st.Size(), limit)
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("reading %d bytes: %w", st.Size(), err)
	}
	return data, nil
}

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

// loadCached returns the executable cached under key, or nil: a miss, logged with the reason
// when an entry existed but was refused. Nothing reaches the plugin before the entry's header
// and checksum are verified.
func (c *Client) loadCached(key [sha256.Size]byte, options []byte) *C.PJRT_LoadedExecutable {
	if !c.cacheUsable() {
		return nil
	}
	path := c.cache.path(key)
	reject := func(why string, err error) *C.PJRT_LoadedExecutable {
		c.stats.misses.Add(1)
		c.stats.rejects.Add(1)
		c.logger.Warn("pjrt: compile cache miss: "+why, "path", path, "err", err)
		return nil
	}
	data, err := readEntry(path, MaxCompileCacheEntry)
	if errors.Is(err, errNoEntry) {
		c.stats.misses.Add(1)
		return nil
	}
	if err != nil {
		return reject("cannot read entry", err)
	}
	payload, err := decodeEntry(key, data)
	if err != nil {
		return reject("bad entry", err)
	}
	if len(payload) == 0 {
		return reject("bad entry", errors.New("empty payload"))
	}
	loaded, err := c.deserialize(payload, options)
	if err != nil {
		return reject("entry does not load", err)
	}
	c.stats.hits.Add(1)
	return loaded
}

// storeCached writes e's serialization under key atomically (a temporary file renamed into
// place); a failure is logged and otherwise ignored.
func (c *Client) storeCached(key [sha256.Size]byte, e *Executable) {
	if c.cache == nil {
		return
	}
	data, err := e.Serialize()
	if err != nil {
		c.logger.Warn("pjrt: compile cache: cannot serialize executable", "err", err)
		return
	}
	if len(data) == 0 || len(data) > MaxCompileCacheEntry-entryHeaderLen {
		c.logger.Warn("pjrt: compile cache: executable not cached", "bytes", len(data), "limit", MaxCompileCacheEntry)
		return
	}
	path := c.cache.path(key)
	tmp, err := os.CreateTemp(c.cache.dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		c.logger.Warn("pjrt: compile cache: cannot write entry", "path", path, "err", err)
		return
	}
	_, werr := tmp.Write(encodeEntry(key, data))
	cerr := tmp.Close()
	if werr == nil && cerr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil || cerr != nil {
		_ = os.Remove(tmp.Name())
		c.logger.Warn("pjrt: compile cache: cannot write entry", "path", path, "err", errors.Join(werr, cerr))
		return
	}
	c.stats.writes.Add(1)
}
