package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSpec(t *testing.T) {
	for in, want := range map[string]string{
		"x,y":       "P('x', 'y')",
		"x,_":       "P('x', None)",
		"(y x),?":   "P(('y', 'x'), UNCONSTRAINED)",
		"":          "P()",
		"None,data": "P(None, 'data')",
	} {
		assert.Equal(t, want, parseSpec(in).String(), in)
	}
}

func TestVisualizeSim(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, visualize(&b, []string{"-sim", "-mesh", "x=4,y=2", "-spec", "_,y", "-shape", "8,8"}))
	assert.Contains(t, b.String(), "│CPU 0,2,4,6│CPU 1,3,5,7│")
	err := visualize(&b, []string{"-sim", "-mesh", "x=4,y=2", "-spec", "w", "-shape", "8,8"})
	assert.ErrorContains(t, err, "resource axis w")
	err = visualize(&b, []string{"-sim", "-mesh", "x=4", "-shape", "8,z"})
	assert.ErrorContains(t, err, "-shape")
}

func TestDevicesAndBench(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, devices(&b, []string{"-devices", "4"}))
	assert.Regexp(t, `\nAPI      0\.(81|1[0-9][0-9])\n`, b.String()) // the default CPU plugin's, or $XLAMESH_PJRT_PLUGIN's
	assert.Contains(t, b.String(), "CpuDevice(id=3)")
	b.Reset()
	// The chain and transfer figures, small: a 4 MiB transfer and chains of 10 calls.
	require.NoError(t, bench(&b, io.Discard, []string{"-what", "chain,transfer", "-iters", "2", "-devices", "4", "-mib", "4", "-chain", "10"}))
	sections := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n\n")
	require.Len(t, sections, 2, b.String())
	checkChainOutput(t, sections[0], 10)
	checkTransferOutput(t, sections[1], 4)

	b.Reset()
	require.NoError(t, bench(&b, io.Discard, []string{"-what", "chain", "-iters", "1", "-devices", "4", "-chain", "3"}))
	checkChainOutput(t, strings.TrimSuffix(b.String(), "\n"), 3)

	b.Reset()
	require.NoError(t, bench(&b, io.Discard, []string{"-what", "transfer", "-format", "csv", "-iters", "1", "-devices", "4", "-mib", "4"}))
	records, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 4)
	assert.Equal(t, []string{"figure", "seconds", "mb_s", "vs_copy"}, records[0])
	assert.Equal(t, []string{"Put", "ToHost", "copy"}, []string{records[1][0], records[2][0], records[3][0]})
}

// checkChainOutput checks bench's chained-call report: the header for chains of length calls,
// then a row for 1 device (8 rows, P()) and one for all 4 devices (P('x',)), each with a positive
// time per chain and that time divided by length per call.
func checkChainOutput(t *testing.T, out string, length int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	require.Len(t, lines, 4, out)
	assert.Equal(t, fmt.Sprintf("chained calls: %d calls x = f(x) of x*1 on f32[rows,2] without waiting, then one wait", length), lines[0])
	assert.Equal(t, []string{"devices", "rows", "spec", "per", "chain", "per", "call"}, strings.Fields(lines[1]))
	for i, want := range [][]string{{"1", "8", "P()"}, {"4", "8", "P('x',)"}} {
		f := strings.Fields(lines[2+i])
		require.Len(t, f, 5, lines[2+i])
		assert.Equal(t, want, f[:3])
		chain, err := time.ParseDuration(f[3])
		require.NoError(t, err, lines[2+i])
		require.Positive(t, chain, lines[2+i])
		call, err := time.ParseDuration(f[4])
		require.NoError(t, err, lines[2+i])
		// Both are rounded (to 1µs and 10ns) from the same exact time.
		assert.InDelta(t, float64(chain)/float64(length), float64(call), float64(time.Microsecond)/float64(length)+float64(10*time.Nanosecond), lines[2+i])
	}
}

// checkTransferOutput checks bench's transfer report for mib MiB on 4 devices (a 2x2 mesh): rows
// Put, ToHost and copy, each with a positive time, the MB/s of mib MiB in it, and its ratio to copy.
func checkTransferOutput(t *testing.T, out string, mib int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	require.Len(t, lines, 5, out)
	assert.Equal(t, fmt.Sprintf("transfers: f32[%d,8192] (%d MiB), NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y'), memory_kind=device); Put waits for the array, copy is Go's copy of the same bytes", 32*mib, mib), lines[0])
	assert.Equal(t, []string{"figure", "per", "op", "MB/s", "vs", "copy"}, strings.Fields(lines[1]))
	times := make([]time.Duration, 3)
	ratios := make([]float64, 3)
	for i, name := range []string{"Put", "ToHost", "copy"} {
		f := strings.Fields(lines[2+i])
		require.Len(t, f, 4, lines[2+i])
		assert.Equal(t, name, f[0])
		d, err := time.ParseDuration(f[1])
		require.NoError(t, err, lines[2+i])
		require.Positive(t, d, lines[2+i])
		mbs, err := strconv.ParseFloat(f[2], 64)
		require.NoError(t, err, lines[2+i])
		bytes := float64(mib << 20)
		lo, hi := bytes/(d+time.Microsecond/2).Seconds()/1e6, bytes/max(d-time.Microsecond/2, time.Nanosecond).Seconds()/1e6
		assert.True(t, mbs >= lo-0.5 && mbs <= hi+0.5, "%s: %g MB/s, want %.0f..%.0f for %v", name, mbs, lo, hi, d)
		times[i] = d
		ratios[i], err = strconv.ParseFloat(f[3], 64)
		require.NoError(t, err, lines[2+i])
	}
	assert.Equal(t, 1.0, ratios[2])
	half := time.Microsecond / 2
	for i, name := range []string{"Put", "ToHost"} {
		lo := (times[i] - half).Seconds() / (times[2] + half).Seconds()
		hi := (times[i] + half).Seconds() / max(times[2]-half, time.Nanosecond).Seconds()
		assert.True(t, ratios[i] >= lo-0.005 && ratios[i] <= hi+0.005, "%s: %g times copy, want %.2f..%.2f", name, ratios[i], lo, hi)
	}
}

// TestInstallPluginCheckRepairs installs a plugin from a local index (-index), truncates it, and
// checks that install-plugin -check -q reports the damage and reinstalls it, and that a second
// run finds it intact and says nothing.
func TestInstallPluginCheckRepairs(t *testing.T) {
	const member = "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"
	content := []byte("a pretend plugin, long enough to truncate")
	var whl bytes.Buffer
	z := zip.NewWriter(&whl)
	f, err := z.Create(member)
	require.NoError(t, err)
	f.Write(content)
	require.NoError(t, z.Close())
	sum := sha256.Sum256(whl.Bytes())
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pypi/xla-cpu-pjrt/json":
			fmt.Fprintf(w, `{"releases": {"9.9": [{"filename": "xla_cpu_pjrt-9.9-py3-none-manylinux_2_27_%s.whl", "url": "/w.whl", "size": %d, "packagetype": "bdist_wheel", "digests": {"sha256": "%x"}}]}}`,
				arch, whl.Len(), sum)
		case "/w.whl":
			w.Write(whl.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	args := []string{"-index", srv.URL + "/pypi", "-plugin", "cpu-0.81", "-version", "9.9", "-dir", dir, "-check", "-q"}
	var out, errOut bytes.Buffer
	require.NoError(t, installPlugin(&out, &errOut, args))
	path := filepath.Join(dir, "plugins", "xla-cpu-pjrt-9.9", "xla_cpu_pjrt.so")
	assert.Equal(t, path+"\n", out.String())
	assert.Empty(t, errOut.String())

	require.NoError(t, os.Truncate(path, 7))
	out.Reset()
	require.NoError(t, installPlugin(&out, &errOut, args))
	assert.Equal(t, "install: xla-cpu-pjrt==9.9: installed plugin damaged: "+path+
		fmt.Sprintf(" has 7 bytes, %d were installed (truncated or replaced); reinstalling\n", len(content)), errOut.String())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, got)

	errOut.Reset()
	require.NoError(t, installPlugin(&out, &errOut, args))
	assert.Empty(t, errOut.String())
}

// TestInstallPluginInterruptRemovesDownload interrupts install-plugin (SIGINT) while its
// download streams: the command exits 1 and leaves no .download-*.whl behind.
func TestInstallPluginInterruptRemovesDownload(t *testing.T) {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pypi/xla-cpu-pjrt/json":
			fmt.Fprintf(w, `{"releases": {"9.9": [{"filename": "xla_cpu_pjrt-9.9-py3-none-manylinux_2_27_%s.whl", "url": "/w.whl", "size": 2097152, "packagetype": "bdist_wheel", "digests": {"sha256": "%064x"}}]}}`, arch, 0)
		case "/w.whl":
			w.Header().Set("Content-Length", "2097152")
			w.Write(make([]byte, 1<<20))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the second half never comes
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "XLAMESH_TEST_MAIN="+strings.Join([]string{"install-plugin", "-index", srv.URL + "/pypi",
		"-plugin", "cpu-0.81", "-version", "9.9", "-dir", dir, "-q"}, "\n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	pattern := filepath.Join(dir, "plugins", "xla-cpu-pjrt-9.9", ".download-*.whl")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			if st, err := os.Stat(m[0]); err == nil && st.Size() > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no download under way after 20s: %s", stderr.String())
		}
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, stderr.String())
	assert.Equal(t, 1, exit.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "interrupt signal received")
	left, _ := filepath.Glob(pattern)
	assert.Empty(t, left, "the interrupted download's file stays")
}
