package pjrt_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

var (
	cacheMutants = flag.Int("cache-mutants", 40,
		"how many mutants of a real compile cache entry TestCompileCacheMutants loads (in child processes)")
	cacheMutantsSeed = flag.Uint64("cache-mutants-seed", 1, "the seed of TestCompileCacheMutants' mutations")
)

// envMutantChild, set to a work directory, makes TestCompileCacheMutants the child that loads
// mutants; envMutantStart gives the first mutant's index.
const (
	envMutantChild = "XLAMESH_CACHE_MUTANT_CHILD"
	envMutantStart = "XLAMESH_CACHE_MUTANT_START"
	mutantTimeout  = 60 * time.Second
)

// The ways TestCompileCacheMutants damages an entry.
var mutantKinds = []string{
	"bit flip", "header bit flip", "2-8 bit flips", "bytes overwritten", "truncated", "bytes appended",
	"bytes inserted", "bytes deleted", "header range zeroed", "the other program's entry",
	"the other program's header", "the other program's payload", "old format (no header)",
	"entry twice", "empty", "length field rewritten", "FIFO", "link to /dev/null", "directory",
	"dangling link", "unchanged",
}

// mutant returns mutant i of the entry good (of x+1), other being the entry of 2x: the kind
// and the file's bytes (nil for the kinds that are not regular files).
func mutant(seed uint64, i int, good, other []byte) (string, []byte) {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	kind := mutantKinds[rng.IntN(len(mutantKinds))]
	d := slices.Clone(good)
	hdr := pjrt.CacheEntryHeaderLen
	flip := func(lo, hi int) {
		bit := lo*8 + rng.IntN((hi-lo)*8)
		d[bit/8] ^= 1 << (bit % 8)
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		return b
	}
	switch kind {
	case "bit flip":
		flip(0, len(d))
	case "header bit flip":
		flip(0, hdr)
	case "2-8 bit flips":
		for range 2 + rng.IntN(7) {
			flip(0, len(d))
		}
	case "bytes overwritten":
		at := rng.IntN(len(d))
		copy(d[at:], random(1+rng.IntN(16)))
	case "truncated":
		d = d[:rng.IntN(len(d))]
	case "bytes appended":
		d = append(d, random(1+rng.IntN(64))...)
	case "bytes inserted":
		at := rng.IntN(len(d) + 1)
		d = slices.Insert(d, at, random(1+rng.IntN(64))...)
	case "bytes deleted":
		at := rng.IntN(len(d))
		d = slices.Delete(d, at, min(len(d), at+1+rng.IntN(64)))
	case "header range zeroed":
		at := rng.IntN(hdr)
		clear(d[at:min(hdr, at+1+rng.IntN(16))])
	case "the other program's entry":
		d = slices.Clone(other)
	case "the other program's header":
		d = append(slices.Clone(other[:hdr]), good[hdr:]...)
	case "the other program's payload":
		d = append(slices.Clone(good[:hdr]), other[hdr:]...)
	case "old format (no header)":
		d = d[hdr:]
	case "entry twice":
		d = append(d, good...)
	case "empty":
		d = []byte{}
	case "length field rewritten": // the header's length made to match a truncated payload
		d = d[:hdr+rng.IntN(len(d)-hdr)]
		binary.LittleEndian.PutUint64(d[hdr-8-32:], uint64(len(d)-hdr))
	case "FIFO", "link to /dev/null", "directory", "dangling link":
		d = nil
	}
	return kind, d
}

// TestCompileCacheMutants writes a real entry, damages it -cache-mutants seeded ways and loads
// each through Compile in a child process (a crash or hang costs the child, not the test): each
// load must miss and compile, or hit, and the program's result is checked exactly. The test
// fails on any crash, hang or wrong result (an error from Compile included).
//
//	go test ./pjrt -run TestCompileCacheMutants -cache-mutants 3000 -timeout 60m -v
func TestCompileCacheMutants(t *testing.T) {
	if work := os.Getenv(envMutantChild); work != "" {
		start, err := strconv.Atoi(os.Getenv(envMutantStart))
		require.NoError(t, err)
		runMutantChild(t, work, start)
		return
	}
	work := t.TempDir()
	cacheDir := filepath.Join(work, "cache")
	var log bytes.Buffer
	c, err := cacheClient(cacheDir, &log)
	require.NoError(t, err)
	require.NoError(t, runCached(c, plusOneModule, plusOneWant))
	require.NoError(t, runCached(c, twiceModule, twiceWant))
	entry, err := pjrt.CacheEntryPath(c, plusOneModule, cacheOptions)
	require.NoError(t, err)
	other, err := pjrt.CacheEntryPath(c, twiceModule, cacheOptions)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	for name, path := range map[string]string{"good": entry, "other": other} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(work, name), data, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(work, "entry"), []byte(entry), 0o644))

	n, seed := *cacheMutants, *cacheMutantsSeed
	results := map[int]string{} // index: "hit", "miss", "wrong: ...", "crash: ...", "hang"
	kinds := map[int]string{}
	for start := 0; start < n; {
		next, crash := runMutantParent(t, work, start, n, seed, results, kinds)
		if next <= start && crash == "" {
			t.Fatalf("a child made no progress from mutant %d", start)
		}
		start = next
	}
	counts := map[string]int{}
	byKind := map[string]map[string]int{}
	for i := range n {
		r := results[i]
		status, _, _ := strings.Cut(r, ":")
		counts[status]++
		if byKind[kinds[i]] == nil {
			byKind[kinds[i]] = map[string]int{}
		}
		byKind[kinds[i]][status]++
		if status != "hit" && status != "miss" {
			t.Errorf("mutant %d (%s): %s", i, kinds[i], r)
		}
	}
	names := make([]string, 0, len(byKind))
	for k := range byKind {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("  %-28s %v", k, byKind[k])
	}
	t.Logf("compile cache mutants (seed %d): %d loaded: %d hits, %d misses; %d crashes, %d hangs, %d wrong",
		seed, n, counts["hit"], counts["miss"], counts["crash"], counts["hang"], counts["wrong"])
}

// runMutantParent runs one child from mutant start, records what it reports, and returns where
// the next child starts; crash is set when the child died inside a mutant.
func runMutantParent(t *testing.T, work string, start, n int, seed uint64, results map[int]string, kinds map[int]string) (int, string) {
	progress := filepath.Join(work, "progress")
	require.NoError(t, os.WriteFile(progress, nil, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*mutantTimeout+time.Duration(n-start)*2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCompileCacheMutants$", "-test.count=1",
		"-cache-mutants="+strconv.Itoa(n), "-cache-mutants-seed="+strconv.FormatUint(seed, 10))
	cmd.Env = append(os.Environ(), envMutantChild+"="+work, envMutantStart+"="+strconv.Itoa(start))
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()

	data, err := os.ReadFile(progress)
	require.NoError(t, err)
	started := -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 4)
		if len(f) < 3 {
			continue
		}
		i, err := strconv.Atoi(f[1])
		require.NoError(t, err, "progress line %q", sc.Text())
		kinds[i] = f[2]
		switch f[0] {
		case "start":
			started = i
		case "done":
			results[i] = f[3]
		case "hang":
			results[i] = "hang"
		}
	}
	if runErr == nil {
		return n, ""
	}
	if started < 0 || results[started] != "" && results[started] != "hang" {
		t.Fatalf("the mutant child failed outside a mutant (after %d): %v\n%s", started, runErr, out.String())
	}
	if results[started] == "" {
		why := runErr.Error()
		if ctx.Err() != nil {
			why = "killed after the child's time limit"
			results[started] = "hang"
		} else {
			results[started] = "crash: " + why + ": " + out.last()
		}
	}
	return started + 1, results[started]
}

// runMutantChild loads mutants from start on, reporting each to work/progress: "start i kind",
// then "done i kind status" (hit, miss or wrong: why) or "hang i kind".
func runMutantChild(t *testing.T, work string, start int) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(work, name))
		require.NoError(t, err)
		return data
	}
	good, other, entry := read("good"), read("other"), string(read("entry"))
	f, err := os.OpenFile(filepath.Join(work, "progress"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer f.Close()
	report := func(format string, args ...any) {
		_, err := fmt.Fprintf(f, format+"\n", args...)
		require.NoError(t, err)
	}
	platform, err := pjrttest.Options(1)
	require.NoError(t, err)
	c, err := pjrt.Open(append(platform, pjrt.WithCompileCache(filepath.Dir(entry)),
		pjrt.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))...)
	require.NoError(t, err)
	defer c.Close()
	for i := start; i < *cacheMutants; i++ {
		kind, data := mutant(*cacheMutantsSeed, i, good, other)
		require.NoError(t, os.RemoveAll(entry))
		switch kind {
		case "FIFO":
			require.NoError(t, syscall.Mkfifo(entry, 0o644))
		case "link to /dev/null":
			require.NoError(t, os.Symlink("/dev/null", entry))
		case "directory":
			require.NoError(t, os.Mkdir(entry, 0o755))
		case "dangling link":
			require.NoError(t, os.Symlink(filepath.Join(work, "nowhere"), entry))
		default:
			require.NoError(t, os.WriteFile(entry, data, 0o644))
		}
		report("start\t%d\t%s", i, kind)
		watchdog := time.AfterFunc(mutantTimeout, func() {
			report("hang\t%d\t%s", i, kind)
			os.Exit(3)
		})
		before := c.CompileStats()
		status := "miss"
		if err := runCached(c, plusOneModule, plusOneWant); err != nil {
			status = "wrong: " + strings.ReplaceAll(err.Error(), "\n", " ")
		} else if statsDelta(c, before).CacheHits == 1 {
			status = "hit"
		} else if kind == "unchanged" {
			status = "wrong: the unchanged entry missed"
		}
		watchdog.Stop()
		report("done\t%d\t%s\t%s", i, kind, status)
	}
}

// tail keeps the last 4 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// last returns the line that says how the child died (a signal, a fatal error, a panic), or
// else the last line written.
func (t *tail) last() string {
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	for _, l := range lines {
		for _, p := range []string{"SIG", "fatal error", "panic:", "signal"} {
			if strings.HasPrefix(l, p) {
				return l
			}
		}
	}
	return lines[len(lines)-1]
}
