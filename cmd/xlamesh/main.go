// Command xlamesh is the command-line face of the xlamesh library.
//
//	xlamesh devices [-plugin P] [-devices N]
//	    open a PJRT client and list its devices with their attributes
//	xlamesh visualize -mesh x=4,y=2 -spec x,y -shape 8,8 [-devices N]
//	    print jax.debug.visualize_array_sharding's table for a sharding on the CPU devices
//	xlamesh install-plugin [-plugin cpu|cpu-0.115|cuda12|cuda13|tpu[,...]] [-version V] [-dir D] [-check] [-path]
//	    download a pinned PJRT plugin from PyPI into the user cache (no Python needed) and print
//	    its path; pjrt.Open finds the CPU plugin there by default
//	xlamesh bench [-what matmul,chain,transfer] [-n 1024] [-iters 20] [-chain 1000] [-mib 256] [-devices N]
//	    time a sharded matmul on every 2-D mesh shape of the devices, chains of calls that do not
//	    wait in between (one device and all), and Put and ToHost of a split array against a Go copy
//
// The plugin is found as pjrt.Open finds it: $XLAMESH_PJRT_PLUGIN, else the pinned CPU plugin.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/install"
)

const usage = `usage: xlamesh <command> [flags]

commands:
  devices         list the devices of a PJRT client
  visualize       print the sharding table of an array on a mesh
  install-plugin  download a pinned PJRT plugin into the user cache
  bench           time a sharded matmul over the mesh shapes, chained calls, and transfers

Run 'xlamesh <command> -h' for a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "devices":
		err = devices(os.Stdout, args)
	case "visualize":
		err = visualize(os.Stdout, args)
	case "install-plugin":
		err = installPlugin(os.Stdout, args)
	case "bench":
		err = bench(os.Stdout, args)
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		err = fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	var ue *usageErr
	if errors.As(err, &ue) {
		fmt.Fprintln(os.Stderr, "xlamesh:", err)
		ue.fs.SetOutput(os.Stderr)
		ue.fs.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xlamesh:", err)
		os.Exit(1)
	}
}

// clientFlags are the flags every command that opens a client shares.
type clientFlags struct {
	plugin  string
	devices int
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.plugin, "plugin", "", "PJRT plugin name or path (default: $XLAMESH_PJRT_PLUGIN or the pinned CPU plugin)")
	fs.IntVar(&c.devices, "devices", 0, fmt.Sprintf("number of CPU devices of a CPU plugin (0: %d for the pinned CPU plugin, the plugin's own default otherwise)", pjrt.DefaultCPUDeviceCount))
}

func (c *clientFlags) open() (*pjrt.Client, error) {
	var opts []pjrt.Option
	if c.devices != 0 {
		opts = append(opts, pjrt.WithCPUDeviceCount(c.devices))
	}
	if c.plugin != "" {
		opts = append(opts, pjrt.WithPlugin(c.plugin))
	}
	return pjrt.Open(opts...)
}

func devices(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := cf.open()
	if err != nil {
		return err
	}
	defer c.Close()
	major, minor := c.Plugin().APIVersion()
	fmt.Fprintf(w, "plugin   %s\nAPI      %d.%d\nplatform %s %s\nprocess  %d\n", c.Plugin().Path(), major, minor, c.Platform(), c.PlatformVersion(), c.ProcessIndex())
	for k, v := range c.Plugin().Attributes() {
		fmt.Fprintf(w, "attr     %s = %v\n", k, v)
	}
	fmt.Fprintf(w, "%-4s %-8s %-7s %-8s %-11s %-8s %s\n", "id", "kind", "process", "local_hw", "addressable", "coords", "description")
	for _, d := range c.Devices() {
		fmt.Fprintf(w, "%-4d %-8s %-7d %-8d %-11v %-8v %s\n", d.ID(), d.Kind(), d.ProcessIndex(), d.LocalHardwareID(), d.IsAddressable(), d.Coords(), d)
	}
	return nil
}

// parseMesh reads "x=4,y=2" into sizes and names.
func parseMesh(s string) ([]int, []string, error) {
	var sizes []int
	var names []string
	for _, part := range strings.Split(s, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(size)
		if !ok || err != nil {
			return nil, nil, fmt.Errorf("-mesh %q: want name=size,... (e.g. x=4,y=2)", s)
		}
		names, sizes = append(names, name), append(sizes, n)
	}
	return sizes, names, nil
}

// parseSpec reads "x,y" / "x,_" / "(x y),_" into a PartitionSpec: "_" or "" is None, "?" is
// Unconstrained, "(a b)" is a tuple of axes.
func parseSpec(s string) mesh.PartitionSpec {
	if strings.TrimSpace(s) == "" {
		return mesh.P()
	}
	var entries []any
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "_" || part == "" || part == "None":
			entries = append(entries, nil)
		case part == "?":
			entries = append(entries, mesh.Unconstrained)
		case strings.HasPrefix(part, "(") && strings.HasSuffix(part, ")"):
			entries = append(entries, mesh.Axes(strings.Fields(part[1:len(part)-1])...))
		default:
			entries = append(entries, part)
		}
	}
	return mesh.P(entries...)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a comma-separated list of integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func visualize(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("visualize", flag.ContinueOnError)
	meshFlag := fs.String("mesh", "x=4,y=2", "mesh axes as name=size,...")
	specFlag := fs.String("spec", "x,y", "partition spec: axes per dimension, '_' for None, '(a b)' for a tuple")
	shapeFlag := fs.String("shape", "8,8", "array shape (1-D or 2-D)")
	sim := fs.Bool("sim", false, "use simulated CPU devices instead of opening a PJRT client")
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	sizes, names, err := parseMesh(*meshFlag)
	if err != nil {
		return err
	}
	shape, err := parseInts(*shapeFlag)
	if err != nil {
		return fmt.Errorf("-shape: %w", err)
	}
	var ds []mesh.Device
	if *sim {
		n := cf.devices
		if n == 0 {
			n = pjrt.DefaultCPUDeviceCount
		}
		ds = mesh.SimDevices(n)
	} else {
		c, err := cf.open()
		if err != nil {
			return err
		}
		defer c.Close()
		ds = jit.Devices(c)
	}
	n := 1
	for _, s := range sizes {
		n *= s
	}
	if n > len(ds) {
		return fmt.Errorf("-mesh %s needs %d devices, have %d", *meshFlag, n, len(ds))
	}
	m, err := mesh.New(ds[:n], sizes, names...)
	if err != nil {
		return err
	}
	s, err := mesh.NewNamedSharding(m, parseSpec(*specFlag))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s, shape %v\n", s, shape)
	if err := mesh.Visualize(w, s, shape); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func installPlugin(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("install-plugin", flag.ContinueOnError)
	var names []string
	for _, p := range install.Known {
		names = append(names, p.Name)
	}
	plugins := fs.String("plugin", "cpu", "which plugins, comma-separated: "+strings.Join(names, ", "))
	version := fs.String("version", "", "a PyPI version other than the pinned one (its sha256 is then the index's; one plugin only)")
	dir := fs.String("dir", "", "cache directory (default $XLAMESH_CACHE_DIR, else the user cache directory + /xlamesh)")
	pathOnly := fs.Bool("path", false, "print where the plugins are installed; install nothing")
	check := fs.Bool("check", false, "load each installed plugin and check the PJRT C API version it reports against the pin")
	quiet := fs.Bool("q", false, "no progress output")
	if err := fs.Parse(args); err != nil {
		return usageError(fs, "%v", err)
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected arguments %q", fs.Args())
	}
	var list []install.Plugin
	for _, name := range strings.Split(*plugins, ",") {
		p, err := install.Lookup(strings.TrimSpace(name))
		if err != nil {
			return usageError(fs, "%v", err)
		}
		list = append(list, p)
	}
	if *version != "" {
		if len(list) != 1 {
			return usageError(fs, "-version needs exactly one -plugin")
		}
		if *version != list[0].Version {
			list[0].Version, list[0].SHA256, list[0].API = *version, "", ""
		}
	}
	if *dir == "" {
		var err error
		if *dir, err = install.Dir(); err != nil {
			return err
		}
	}
	for _, p := range list {
		if *pathOnly {
			fmt.Fprintln(w, p.Path(*dir))
			continue
		}
		opts := install.Options{}
		if !*quiet {
			opts.Progress = os.Stderr
		}
		path, err := install.Install(context.Background(), p, *dir, opts)
		if err != nil {
			return err
		}
		if *check && p.API != "" {
			pl, err := pjrt.LoadPlugin(path)
			if err != nil {
				return err
			}
			if major, minor := pl.APIVersion(); fmt.Sprintf("%d.%d", major, minor) != p.API {
				return fmt.Errorf("install-plugin: %s==%s reports PJRT C API %d.%d, the pin says %s", p.Package, p.Version, major, minor, p.API)
			}
		}
		if !*quiet {
			fmt.Fprintf(os.Stderr, "xlamesh: %s==%s (PJRT C API %s) installed\n", p.Package, p.Version, p.API)
		}
		fmt.Fprintln(w, path)
	}
	return nil
}

// benchFigures are the figures bench can time, in the order it prints them.
var benchFigures = []string{"matmul", "chain", "transfer"}

func bench(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	what := fs.String("what", strings.Join(benchFigures, ","), "comma-separated figures to time: "+strings.Join(benchFigures, ", "))
	n := fs.Int("n", 1024, "matmul: matrix size, C[n,n] = A[n,n] B[n,n], f32")
	iters := fs.Int("iters", 20, "timed repetitions of each figure (after one untimed warm-up)")
	chain := fs.Int("chain", 1000, "chain: calls x = f(x) per chain, without waiting in between")
	mib := fs.Int("mib", 256, "transfer: MiB of the f32 array put on and gathered from the devices")
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	figures := map[string]bool{}
	for _, f := range strings.Split(*what, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(benchFigures, f) {
			return fmt.Errorf("-what %q: unknown figure %q (have %s)", *what, f, strings.Join(benchFigures, ", "))
		}
		figures[f] = true
	}
	if *iters < 1 || *chain < 1 || *mib < 1 || *n < 1 {
		return fmt.Errorf("-n, -iters, -chain and -mib must be positive (got %d, %d, %d, %d)", *n, *iters, *chain, *mib)
	}
	c, err := cf.open()
	if err != nil {
		return err
	}
	defer c.Close()
	first := true
	for _, f := range benchFigures {
		if !figures[f] {
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		switch f {
		case "matmul":
			err = benchMatMul(w, c, *n, *iters)
		case "chain":
			err = benchChain(w, c, *chain, *iters)
		case "transfer":
			err = benchTransfer(w, c, *mib, *iters)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// timeOp runs op once untimed (compilation, first touch of memory), then iters times, and returns
// the mean time of one op.
func timeOp(iters int, op func() error) (time.Duration, error) {
	if err := op(); err != nil {
		return 0, err
	}
	start := time.Now()
	for range iters {
		if err := op(); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(iters), nil
}

// benchMatMul times call + wait of a sharded matmul on every 2-D mesh shape of the devices.
func benchMatMul(w io.Writer, c *pjrt.Client, n, iters int) error {
	ds := jit.Devices(c)
	a := make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%17) / 17
	}
	fmt.Fprintf(w, "matmul f32[%d,%d] x f32[%d,%d], A P('x', None), B P(None, 'y'), C P('x', 'y'), %d devices\n", n, n, n, n, len(ds))
	fmt.Fprintf(w, "%-8s %12s %12s\n", "mesh", "per call", "GFLOP/s")
	for x := len(ds); x >= 1; x-- {
		if len(ds)%x != 0 || n%x != 0 || n%(len(ds)/x) != 0 {
			continue
		}
		y := len(ds) / x
		m, err := mesh.New(ds, []int{x, y}, "x", "y")
		if err != nil {
			return err
		}
		d, err := timeMatMul(c, m, a, n, iters)
		if err != nil {
			return fmt.Errorf("mesh %dx%d: %w", x, y, err)
		}
		fmt.Fprintf(w, "%-8s %12v %12.1f\n", fmt.Sprintf("%dx%d", x, y), d.Round(time.Microsecond), 2*float64(n)*float64(n)*float64(n)/d.Seconds()/1e9)
	}
	return nil
}

// waitClose waits for an array (returning the error of the execution that made it) and frees it.
func waitClose(a *jit.Array) error {
	err := a.Wait()
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	return err
}

func timeMatMul(c *pjrt.Client, m mesh.Mesh, data []float32, n, iters int) (time.Duration, error) {
	put := func(spec mesh.PartitionSpec) (*jit.Array, error) {
		s, err := mesh.NewNamedSharding(m, spec)
		if err != nil {
			return nil, err
		}
		return jit.Put(c, data, []int{n, n}, s)
	}
	A, err := put(mesh.P("x", nil))
	if err != nil {
		return 0, err
	}
	defer A.Close()
	B, err := put(mesh.P(nil, "y"))
	if err != nil {
		return 0, err
	}
	defer B.Close()
	f := jit.New("bench_matmul", func(f *lower.Function, v []lower.Value) []lower.Value {
		return []lower.Value{f.MatMul(v[0], v[1])}
	}, jit.OutSpecs(mesh.P("x", "y")))
	call := func(check bool) error {
		out, err := f.Call(c, A, B)
		if err != nil {
			return err
		}
		if !check {
			return waitClose(out[0]) // Call only enqueues the execution
		}
		defer out[0].Close()
		got, err := out[0].ToHost()
		if err != nil {
			return err
		}
		return checkMatMul(got.([]float32), data, n)
	}
	if err := call(true); err != nil { // compile, and check the product once
		return 0, err
	}
	return timeOp(iters, func() error { return call(false) })
}

// benchChain times chains of calls x = f(x) (x*1 on a small f32 array) that do not wait between
// calls, then wait once: the rate at which calls are dispatched. It runs on one device, and on
// all devices with the array split by rows.
func benchChain(w io.Writer, c *pjrt.Client, length, iters int) error {
	ds := jit.Devices(c)
	fmt.Fprintf(w, "chained calls: %d calls x = f(x) of x*1 on f32[rows,2] without waiting, then one wait\n", length)
	fmt.Fprintf(w, "%-8s %-8s %-8s %12s %12s\n", "devices", "rows", "spec", "per chain", "per call")
	counts := []int{1}
	if len(ds) > 1 {
		counts = append(counts, len(ds))
	}
	for _, nd := range counts {
		spec := mesh.P()
		if nd > 1 {
			spec = mesh.P("x")
		}
		rows := 8
		if rows%nd != 0 {
			rows = nd * ((rows + nd - 1) / nd)
		}
		d, err := timeChain(c, ds[:nd], spec, rows, length, iters)
		if err != nil {
			return fmt.Errorf("%d devices: %w", nd, err)
		}
		fmt.Fprintf(w, "%-8d %-8d %-8s %12v %12v\n", nd, rows, spec, d.Round(time.Microsecond), (d / time.Duration(length)).Round(10*time.Nanosecond))
	}
	return nil
}

func timeChain(c *pjrt.Client, ds []mesh.Device, spec mesh.PartitionSpec, rows, length, iters int) (time.Duration, error) {
	m, err := mesh.New(ds, []int{len(ds)}, "x")
	if err != nil {
		return 0, err
	}
	s, err := mesh.NewNamedSharding(m, spec)
	if err != nil {
		return 0, err
	}
	host := make([]float32, rows*2)
	for i := range host {
		host[i] = float32(i)
	}
	x0, err := jit.Put(c, host, []int{rows, 2}, s)
	if err != nil {
		return 0, err
	}
	defer x0.Close()
	f := jit.New(fmt.Sprintf("bench_chain_%d", len(ds)), func(f *lower.Function, v []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(v[0], f.Constant(1))}
	}, jit.OutSpecs(spec))
	// run dispatches the chain and returns its last array, not waited for.
	run := func() (*jit.Array, error) {
		x := x0
		for i := range length {
			out, err := f.Call(c, x)
			if i > 0 {
				x.Close() // the queued execution keeps its buffers until it is done
			}
			if err != nil {
				return nil, err
			}
			x = out[0]
		}
		return x, nil
	}
	x, err := run() // compile, and check the result once: x*1, length times, is x
	if err != nil {
		return 0, err
	}
	got, err := x.ToHost()
	x.Close()
	if err != nil {
		return 0, err
	}
	if !slices.Equal(got.([]float32), host) {
		return 0, fmt.Errorf("chain of %d calls of x*1 gave %v, want %v", length, got, host)
	}
	return timeOp(iters, func() error {
		x, err := run()
		if err != nil {
			return err
		}
		return waitClose(x)
	})
}

// benchTransfer times Put (host to devices, waited for) and ToHost (devices to host) of an f32
// array of mib MiB split over a 2-D mesh of all devices, against a Go copy of the same bytes.
func benchTransfer(w io.Writer, c *pjrt.Client, mib, iters int) error {
	ds := jit.Devices(c)
	const cols = 8192 // 32 KiB rows: 256 MiB is 8192x8192, as in jit's BenchmarkPut256MiB
	rows := mib << 20 / (cols * 4)
	y := 1
	if len(ds)%2 == 0 {
		y = 2
	}
	x := len(ds) / y
	if rows%x != 0 {
		return fmt.Errorf("-mib %d: %d rows do not split over %d devices; pick a multiple of %d MiB", mib, rows, x, x)
	}
	m, err := mesh.New(ds, []int{x, y}, "x", "y")
	if err != nil {
		return err
	}
	s, err := mesh.NewNamedSharding(m, mesh.P("x", "y"))
	if err != nil {
		return err
	}
	shape := []int{rows, cols}
	host := make([]float32, rows*cols)
	for i := range host {
		host[i] = float32(i % 1000)
	}
	fmt.Fprintf(w, "transfers: f32[%d,%d] (%d MiB), %s; Put waits for the array, copy is Go's copy of the same bytes\n", rows, cols, mib, s)
	fmt.Fprintf(w, "%-8s %12s %10s %10s\n", "figure", "per op", "MB/s", "vs copy")
	put, err := timeOp(iters, func() error {
		a, err := jit.Put(c, host, shape, s)
		if err != nil {
			return err
		}
		return waitClose(a)
	})
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	a, err := jit.Put(c, host, shape, s)
	if err != nil {
		return err
	}
	defer a.Close()
	got, err := a.ToHost() // check the round trip once
	if err != nil {
		return fmt.Errorf("to host: %w", err)
	}
	if !slices.Equal(got.([]float32), host) {
		return fmt.Errorf("to host: the array read back differs from the one put")
	}
	toHost, err := timeOp(iters, func() error {
		_, err := a.ToHostBytes()
		return err
	})
	if err != nil {
		return fmt.Errorf("to host: %w", err)
	}
	src := make([]byte, len(host)*4)
	dst := make([]byte, len(src))
	for i := range src {
		src[i] = byte(i)
	}
	cp, _ := timeOp(iters, func() error { copy(dst, src); return nil })
	for _, r := range []struct {
		name string
		d    time.Duration
	}{{"Put", put}, {"ToHost", toHost}, {"copy", cp}} {
		fmt.Fprintf(w, "%-8s %12v %10.0f %10.2f\n", r.name, r.d.Round(time.Microsecond), float64(len(src))/r.d.Seconds()/1e6, r.d.Seconds()/cp.Seconds())
	}
	return nil
}

// checkMatMul compares 64 entries of c, spread over the matrix, with
// a·a computed on the host in float64, so that a benchmark never times a
// wrong product.
func checkMatMul(c, a []float32, n int) error {
	if len(c) != n*n {
		return fmt.Errorf("product has %d elements, want %d", len(c), n*n)
	}
	for k := range 64 {
		i, j := (k*7919)%n, (k*104729+k/8)%n
		var want float64
		for l := range n {
			want += float64(a[i*n+l]) * float64(a[l*n+j])
		}
		if got := float64(c[i*n+j]); math.Abs(got-want) > 1e-4*max(1, math.Abs(want)) {
			return fmt.Errorf("product C[%d,%d] = %g, want %g", i, j, got, want)
		}
	}
	return nil
}
