package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// benchFigures are the figures bench can time, in the order it prints them.
var benchFigures = []string{"sweep", "chain", "transfer"}

// formats are bench's and inspect's output formats.
var formats = []string{"table", "csv", "json"}

// benchOptions are bench's validated flags.
type benchOptions struct {
	kernel      *kernel // nil for a file
	file        string
	n           int
	iters       int
	chain, mib  int
	format      string
	plot        string
	partitioner pjrt.Partitioner
	figures     map[string]bool
}

func bench(w, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	kernelFlag := fs.String("kernel", "matmul", "what the sweep times: "+kernelNames()+
		", or a StableHLO file (.mlir), timed as written on its mhlo.num_partitions devices")
	what := fs.String("what", "sweep", "comma-separated figures: sweep (the kernel on every 2-D mesh shape x sharding, "+
		"ranked), chain (calls that do not wait in between), transfer (Put and ToHost); matmul is sweep with -kernel matmul")
	n := fs.Int("n", 0, "kernel size, a multiple of the device count (default: 1024 for matmul, 512 for mlp and attention)")
	iters := fs.Int("iters", 20, "timed calls per configuration and figure, after one untimed warm-up (the sweep reports their median, chain and transfer their mean)")
	format := fs.String("format", "table", "output format: table, csv (one figure) or json")
	plot := fs.String("plot", "", "also draw the sweep as a bar chart into this SVG file")
	quiet := fs.Bool("q", false, "print no progress on stderr")
	partitioner := fs.String("partitioner", "shardy", "a file's partitioner: shardy (sdy.sharding) or gspmd (mhlo.sharding)")
	chain := fs.Int("chain", 1000, "chain: calls x = f(x) per chain, without waiting in between")
	mib := fs.Int("mib", 256, fmt.Sprintf("transfer: MiB of the f32 array put on and gathered from the devices, 1 to %d "+
		"and at most a %dth of MemAvailable", maxMiB, transferCopies))
	timeout := fs.Duration("timeout", time.Minute, "sweep: the longest one call of the kernel may take; a call that takes longer "+
		"(a loop that never ends) ends bench with an error naming the kernel, exit status 1 (0: no limit)")
	trace := fs.String("trace", "", "also record the plugin's profiler around the figures into this Chrome trace JSON file (ui.perfetto.dev opens it; needs a plugin with the profiler extension, e.g. CUDA)")
	var cf clientFlags
	cf.register(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	o, err := benchFlags(fs, *kernelFlag, *what, *n, *iters, *chain, *mib, *format, *plot, *partitioner)
	if err != nil {
		return err
	}
	if *timeout < 0 {
		return usageError(fs, "-timeout must not be negative, got %v", *timeout)
	}
	perCall = callLimit{limit: *timeout, kernel: *kernelFlag, stderr: stderr}
	p := &progress{}
	if !*quiet {
		p.w = stderr
	}
	p.printf("xlamesh bench: opening the PJRT client\n")
	c, err := cf.open()
	if err != nil {
		return err
	}
	defer c.Close()
	ds := jit.Devices(c)
	if o.kernel != nil && o.figures["sweep"] {
		if d := o.kernel.divisor(len(ds)); o.n%d != 0 {
			return usageError(fs, "-n %d is not a multiple of %d: the %dx1 and 1x%d meshes of %d devices could not split it evenly (try -n %d)",
				o.n, d, len(ds), len(ds), len(ds), (o.n/d+1)*d)
		}
	}
	if o.figures["transfer"] {
		if err := transferFits(fs, len(ds), o.mib); err != nil {
			return err
		}
	}
	tr, err := startTrace(c, *trace)
	if err != nil {
		return err
	}
	defer tr.close()
	reports := map[string]any{}
	var order []string
	for _, f := range benchFigures {
		if !o.figures[f] {
			continue
		}
		var r any
		switch f {
		case "sweep":
			if o.kernel != nil {
				r, err = sweepKernel(c, o.kernel, o.n, o.iters, p)
			} else {
				r, err = sweepFile(c, o.file, o.partitioner, o.iters, p)
			}
		case "chain":
			r, err = benchChain(c, o.chain, o.iters, p)
		case "transfer":
			r, err = benchTransfer(c, o.mib, o.iters, p)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		reports[f] = r
		order = append(order, f)
	}
	if err := tr.write(p); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotSweep(reports["sweep"].(*sweepReport), o.plot); err != nil {
			return err
		}
		p.printf("xlamesh bench: wrote %s\n", o.plot)
	}
	return writeReports(w, o.format, order, reports)
}

// benchFlags validates bench's flags; every mistake is a usage error (exit status 2).
func benchFlags(fs *flag.FlagSet, kernelName, what string, n, iters, chain, mib int, format, plot, part string) (benchOptions, error) {
	o := benchOptions{n: n, iters: iters, chain: chain, mib: mib, format: format, plot: plot, figures: map[string]bool{}}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if fs.NArg() > 0 {
		return o, usageError(fs, "unexpected argument %q (flags only)", fs.Arg(0))
	}
	for _, f := range strings.Split(what, ",") {
		f = strings.TrimSpace(f)
		if f == "matmul" { // the sweep's name before it had kernels
			if set["kernel"] && kernelName != "matmul" {
				return o, usageError(fs, "-what matmul is the sweep of -kernel matmul, not of %q", kernelName)
			}
			f = "sweep"
		}
		if !slices.Contains(benchFigures, f) {
			return o, usageError(fs, "-what %q: unknown figure %q (have %s)", what, f, strings.Join(benchFigures, ", "))
		}
		o.figures[f] = true
	}
	if o.kernel = findKernel(kernelName); o.kernel == nil {
		if err := checkKernelFile(kernelName); err != nil {
			return o, usageError(fs, "-kernel %q is not one of %s, nor a readable StableHLO file: %v", kernelName, kernelNames(), err)
		}
		o.file = kernelName
	}
	switch {
	case set["n"] && n < 1:
		return o, usageError(fs, "-n must be positive, got %d", n)
	case set["n"] && o.kernel == nil:
		return o, usageError(fs, "-n sets the size of a built-in kernel; a file's shapes are its own")
	case iters < 1:
		return o, usageError(fs, "-iters must be positive, got %d", iters)
	case chain < 1:
		return o, usageError(fs, "-chain must be positive, got %d", chain)
	case mib < 1 || mib > maxMiB:
		return o, usageError(fs, "-mib must be between 1 and %d, got %d", maxMiB, mib)
	case o.figures["transfer"] && transferMiBCheck(mib) != nil:
		return o, usageError(fs, "%v", transferMiBCheck(mib))
	case !slices.Contains(formats, format):
		return o, usageError(fs, "-format %q: want table, csv or json", format)
	case format == "csv" && len(o.figures) > 1:
		return o, usageError(fs, "-format csv writes one table: pick one figure with -what")
	case plot != "" && !o.figures["sweep"]:
		return o, usageError(fs, "-plot draws the sweep: add sweep to -what")
	case set["kernel"] && !o.figures["sweep"]:
		return o, usageError(fs, "-kernel chooses what the sweep times: add sweep to -what")
	}
	if plot != "" {
		if err := plotFileFits(plot); err != nil {
			return o, usageError(fs, "%v", err)
		}
	}
	if !set["n"] && o.kernel != nil {
		o.n = o.kernel.defaultN
	}
	var err error
	if o.partitioner, err = parsePartitioner(part); err != nil {
		return o, usageError(fs, "%v", err)
	}
	return o, nil
}

// parseFlags parses args into fs. A flag the command does not have, or a value of the wrong
// type, is a usage error (exit status 2, the message and the flags on stderr, once); -h prints
// the flags to stderr and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stderr)
		fs.Usage()
		return err
	case err != nil:
		return usageError(fs, "%v", err)
	}
	return nil
}

func parsePartitioner(s string) (pjrt.Partitioner, error) {
	switch strings.ToLower(s) {
	case "shardy":
		return pjrt.Shardy, nil
	case "gspmd":
		return pjrt.GSPMD, nil
	}
	return 0, fmt.Errorf("-partitioner %q: want shardy or gspmd", s)
}

// progress tells the user on stderr what bench and inspect are doing, so that a compile of
// several seconds is never silent. Its zero value (no writer) prints nothing.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) printf(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

// step prints what, runs f, and prints how long f took; while f runs it prints a dot every
// two seconds.
func (p *progress) step(what string, f func() error) (time.Duration, error) {
	p.printf("%s...", what)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.printf(".")
			}
		}
	})
	start := time.Now()
	err := f()
	d := time.Since(start)
	close(done)
	wg.Wait()
	if err != nil {
		p.printf(" failed\n")
	} else {
		p.printf(" %v", d.Round(time.Millisecond))
	}
	return d, err
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

// waitClose waits for an array (returning the error of the execution that made it) and frees it.
func waitClose(a *jit.Array) error {
	err := a.Wait()
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	return err
}

// sweepRow is one timed configuration of the sweep.
type sweepRow struct {
	Rank     int      `json:"rank"`
	Mesh     string   `json:"mesh"` // "4x2"; "-" for a file
	Devices  int      `json:"devices"`
	Strategy string   `json:"strategy"`
	In       []string `json:"in"`
	Out      []string `json:"out"`
	Seconds  float64  `json:"seconds"` // per call: the median of the report's Iters calls
	Rate     float64  `json:"rate"`    // in the report's Unit
	// Speedup is the one-device time over this one; null for a file, timed only as written.
	Speedup        *float64 `json:"speedup"`
	CompileSeconds float64  `json:"compile_seconds"`
	// Collectives names the collectives XLA inserted ("all-reduce", "all-gather x2"), and
	// BytesMoved adds up what one device sends in them (pjrt.Collective.BytesMoved).
	Collectives string `json:"collectives"`
	BytesMoved  int64  `json:"bytes_moved"`
}

// sweepReport is the ranked result of the sweep, fastest first.
type sweepReport struct {
	Kernel   string     `json:"kernel"`
	Program  string     `json:"program"`
	Platform string     `json:"platform"`
	Devices  int        `json:"devices"`
	Iters    int        `json:"iters"`
	Unit     string     `json:"unit"` // GFLOP/s, or GB/s of arguments and results for a file
	Rows     []sweepRow `json:"rows"`
}

// sweepConfig is one mesh shape and strategy of a sweep.
type sweepConfig struct {
	m mesh.Mesh
	s strategy
}

// sweepConfigs returns the configurations to time: one device with everything replicated,
// then every 2-D mesh shape x×y of the devices (x from all of them down to 1) with each
// strategy, leaving out one that is the same program as an earlier one (programKey): on 8x1,
// P('x', None) x P(None, 'y') is P('x', None) x P(), and P(('x', 'y'), None) is the same
// program on every mesh shape.
func sweepConfigs(k *kernel, ds []mesh.Device) ([]sweepConfig, error) {
	one, err := mesh.New(ds[:1], []int{1, 1}, "x", "y")
	if err != nil {
		return nil, err
	}
	replicated := make([]mesh.PartitionSpec, len(k.strategies[0].in))
	for i := range replicated {
		replicated[i] = mesh.P()
	}
	out := []sweepConfig{{one, strategy{"replicated", replicated, mesh.P()}}}
	seen := map[string]bool{}
	for x := len(ds); x >= 1; x-- {
		if len(ds)%x != 0 {
			continue
		}
		m, err := mesh.New(ds, []int{x, len(ds) / x}, "x", "y")
		if err != nil {
			return nil, err
		}
		for _, s := range k.strategies {
			if key := programKey(s, m); !seen[key] {
				seen[key] = true
				out = append(out, sweepConfig{m, s})
			}
		}
	}
	return out, nil
}

// meshName returns "4x2" for a mesh of axes 4 and 2.
func meshName(m mesh.Mesh) string {
	s := make([]string, 0, m.NumAxes())
	for _, n := range m.AxisSizes() {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, "x")
}

// sweepKernel times kernel k of size n on every configuration of sweepConfigs and ranks them.
func sweepKernel(c *pjrt.Client, k *kernel, n, iters int, p *progress) (*sweepReport, error) {
	ds := jit.Devices(c)
	configs, err := sweepConfigs(k, ds)
	if err != nil {
		return nil, err
	}
	host := k.inputs(n, len(ds))
	r := &sweepReport{Kernel: k.name, Program: k.describe(n, len(ds)), Platform: c.Platform(), Devices: len(ds),
		Iters: iters, Unit: "GFLOP/s"}
	p.printf("xlamesh bench: %s on %d %s devices: %d configurations, %d timed calls each\n",
		r.Program, len(ds), c.Platform(), len(configs), iters)
	for i, cfg := range configs {
		p.printf("[%d/%d] %s %s: ", i+1, len(configs), meshName(cfg.m), cfg.s.name)
		row, err := timeKernel(c, k, n, cfg, host, iters, p)
		if err != nil {
			return nil, fmt.Errorf("mesh %s, %s (%s): %w", meshName(cfg.m), cfg.s.name, cfg.s, err)
		}
		row.Rate = k.flops(n, len(ds)) / row.Seconds / 1e9
		r.Rows = append(r.Rows, row)
	}
	base := r.Rows[0].Seconds
	for i := range r.Rows {
		s := base / r.Rows[i].Seconds
		r.Rows[i].Speedup = &s
	}
	rank(r.Rows)
	return r, nil
}

// rank sorts rows fastest first and numbers them from 1.
func rank(rows []sweepRow) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Seconds < rows[j].Seconds })
	for i := range rows {
		rows[i].Rank = i + 1
	}
}

// compileKernel lowers kernel k of size n with strategy s for mesh m and compiles it for the
// mesh's devices, as jit.Function.Call would.
func compileKernel(c *pjrt.Client, k *kernel, n int, m mesh.Mesh, s strategy) (*pjrt.Executable, error) {
	f := jit.New(k.name, k.body, jit.OutSpecs(s.out))
	defer f.Close()
	prog, err := f.Lower(m.Abstract(), k.argTypes(n, len(jit.Devices(c)), s)...)
	if err != nil {
		return nil, err
	}
	part := pjrt.Shardy
	if prog.Partitioner() == lower.GSPMD {
		part = pjrt.GSPMD
	}
	return c.Compile(prog.Text(), pjrt.CompileOptions{DeviceAssignment: m.DeviceIDs(), Partitioner: part})
}

// timeKernel compiles one configuration, checks its result once against the host, and times
// iters calls, each waited for.
func timeKernel(c *pjrt.Client, k *kernel, n int, cfg sweepConfig, host [][]float32, iters int, p *progress) (sweepRow, error) {
	d := len(jit.Devices(c))
	row := sweepRow{Mesh: meshName(cfg.m), Devices: cfg.m.Size(), Strategy: cfg.s.name, Out: []string{cfg.s.out.String()}}
	for _, s := range cfg.s.in {
		row.In = append(row.In, s.String())
	}
	var exe *pjrt.Executable
	compile, err := p.step("compiling", func() (err error) {
		exe, err = compileKernel(c, k, n, cfg.m, cfg.s)
		return err
	})
	if err != nil {
		return row, err
	}
	defer exe.Close()
	row.CompileSeconds = compile.Seconds()
	cs, err := exe.Collectives()
	if err != nil {
		return row, err
	}
	row.Collectives, row.BytesMoved = summarize(cs)

	shapes, outShape := k.shapes(n, d)
	arrays := make([]*jit.Array, len(host))
	defer func() {
		for _, a := range arrays {
			if a != nil {
				a.Close()
			}
		}
	}()
	for i, h := range host {
		s, err := mesh.NewNamedSharding(cfg.m, cfg.s.in[i])
		if err != nil {
			return row, err
		}
		if arrays[i], err = jit.Put(c, h, shapes[i], s); err != nil {
			return row, err
		}
	}
	args := make([][]*pjrt.Buffer, cfg.m.Size())
	for _, a := range arrays {
		for pos, sh := range a.AddressableShards() {
			args[pos] = append(args[pos], sh.Data)
		}
	}
	outSharding, err := mesh.NewNamedSharding(cfg.m, cfg.s.out)
	if err != nil {
		return row, err
	}
	if _, err := p.step(", checking", func() error {
		outs, err := exe.Execute(args)
		if err != nil {
			return err
		}
		bufs := make([]*pjrt.Buffer, len(outs))
		for i, o := range outs {
			bufs[i] = o[0]
		}
		out, err := jit.FromShards(c, outShape, outSharding, bufs)
		if err != nil {
			closeBuffers(outs)
			return err
		}
		defer out.Close()
		got, err := out.ToHost()
		if err != nil {
			return err
		}
		return k.check(got.([]float32), host, n, d)
	}); err != nil {
		return row, err
	}
	var per time.Duration
	if _, err := p.step(fmt.Sprintf(", timing %d calls", iters), func() (err error) {
		per, err = timeExecute(exe, args, iters)
		return err
	}); err != nil {
		return row, err
	}
	p.printf(": %v per call\n", per.Round(time.Microsecond))
	row.Seconds = per.Seconds()
	return row, nil
}

// perCall bounds each call of the sweep's kernel (-timeout); bench sets it.
var perCall callLimit

// callLimit is bench's -timeout: the longest one call of kernel may take.
type callLimit struct {
	limit  time.Duration // 0: none
	kernel string
	stderr io.Writer
}

// run runs call within the limit, watched by a timer rather than a goroutine of its own, so that
// the timed calls pay nothing for it. A call that outlives the limit cannot be stopped (PJRT
// cannot interrupt a program), and it holds its arguments, executable and client, which
// unwinding would wait to free: the timer reports the kernel and exits with status 1 at once.
func (l callLimit) run(call func() error) error {
	if l.limit <= 0 {
		return call()
	}
	t := time.AfterFunc(l.limit, func() {
		fmt.Fprintf(l.stderr, "\nxlamesh: bench: kernel %s: a call timed out: it did not end within -timeout %v (a loop that never ends? raise -timeout, or 0 for no limit)\n",
			l.kernel, l.limit)
		os.Exit(1)
	})
	defer t.Stop()
	return call()
}

// timeExecute runs exe on args once untimed, then iters times, each waited for, and returns
// the median time of one call: the sweep ranks configurations whose times differ by less than
// the noise of a busy machine, which moves a mean more than a median.
func timeExecute(exe *pjrt.Executable, args [][]*pjrt.Buffer, iters int) (time.Duration, error) {
	once := func() error {
		outs, err := exe.Execute(args)
		if err != nil {
			return err
		}
		var first error
		for _, o := range outs {
			for _, b := range o {
				if err := b.Wait(); err != nil && first == nil {
					first = err
				}
			}
		}
		closeBuffers(outs)
		return first
	}
	call := func() error { return perCall.run(once) }
	if err := call(); err != nil {
		return 0, err
	}
	times := make([]time.Duration, iters)
	for i := range times {
		start := time.Now()
		if err := call(); err != nil {
			return 0, err
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	if iters%2 == 1 {
		return times[iters/2], nil
	}
	return (times[iters/2-1] + times[iters/2]) / 2, nil
}

func closeBuffers(lists [][]*pjrt.Buffer) {
	for _, l := range lists {
		for _, b := range l {
			if b != nil {
				b.Close()
			}
		}
	}
}

// summarize names the kinds of collectives in cs, with counts ("all-gather x2, all-reduce"), and
// adds up the bytes one device sends in them; "-" when there are none.
func summarize(cs []pjrt.Collective) (string, int64) {
	count := map[string]int{}
	var kinds []string
	var moved int64
	for _, c := range cs {
		if count[c.Kind] == 0 {
			kinds = append(kinds, c.Kind)
		}
		count[c.Kind]++
		moved += c.BytesMoved
	}
	if len(kinds) == 0 {
		return "-", 0
	}
	for i, k := range kinds {
		if count[k] > 1 {
			kinds[i] = fmt.Sprintf("%s x%d", k, count[k])
		}
	}
	return strings.Join(kinds, ", "), moved
}

// humanBytes returns n in B, KiB, MiB or GiB: "512 B", "3.0 MiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

// writeTable writes the ranked sweep as an aligned table.
func (r *sweepReport) writeTable(w io.Writer) {
	fmt.Fprintf(w, "%s on %d %s devices: median of %d calls, fastest first\n", r.Program, r.Devices, r.Platform, r.Iters)
	fmt.Fprintf(w, "%-4s %-6s %-14s %12s %10s %8s %12s  %-22s %s\n",
		"rank", "mesh", "strategy", "per call", r.Unit, "speed-up", "moved/dev", "collectives", "shardings (in -> out)")
	for _, row := range r.Rows {
		speedup := "-"
		if row.Speedup != nil {
			speedup = fmt.Sprintf("%.2fx", *row.Speedup)
		}
		fmt.Fprintf(w, "%-4d %-6s %-14s %12v %10.1f %8s %12s  %-22s %s -> %s\n", row.Rank, row.Mesh, row.Strategy,
			(time.Duration(row.Seconds * 1e9)).Round(time.Microsecond), row.Rate, speedup, humanBytes(row.BytesMoved),
			row.Collectives, strings.Join(row.In, " "), strings.Join(row.Out, " "))
	}
}

// csvRecords returns the sweep as CSV records, a header first.
func (r *sweepReport) csvRecords() [][]string {
	rate := "gflop_s"
	if r.Unit == "GB/s" {
		rate = "gb_s"
	}
	out := [][]string{{"rank", "mesh", "devices", "strategy", "seconds", rate, "speedup", "bytes_moved", "collectives", "in", "out", "compile_seconds"}}
	for _, row := range r.Rows {
		speedup := ""
		if row.Speedup != nil {
			speedup = strconv.FormatFloat(*row.Speedup, 'g', 6, 64)
		}
		out = append(out, []string{strconv.Itoa(row.Rank), row.Mesh, strconv.Itoa(row.Devices), row.Strategy,
			strconv.FormatFloat(row.Seconds, 'g', 6, 64), strconv.FormatFloat(row.Rate, 'g', 6, 64), speedup,
			strconv.FormatInt(row.BytesMoved, 10), row.Collectives, strings.Join(row.In, " "), strings.Join(row.Out, " "),
			strconv.FormatFloat(row.CompileSeconds, 'g', 4, 64)})
	}
	return out
}

// report is a figure bench prints.
type report interface {
	writeTable(w io.Writer)
	csvRecords() [][]string
}

// writeReports writes the figures in order: tables separated by a blank line, CSV of the one
// figure, or one JSON object with a member per figure.
func writeReports(w io.Writer, format string, order []string, reports map[string]any) error {
	switch format {
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		e.SetEscapeHTML(false)
		return e.Encode(reports)
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(reports[order[0]].(report).csvRecords()); err != nil {
			return err
		}
		return cw.Error()
	}
	for i, f := range order {
		if i > 0 {
			fmt.Fprintln(w)
		}
		reports[f].(report).writeTable(w)
	}
	return nil
}

// chainRow is one line of the chain figure.
type chainRow struct {
	Devices int     `json:"devices"`
	Rows    int     `json:"rows"`
	Spec    string  `json:"spec"`
	Chain   float64 `json:"chain_seconds"`
	Call    float64 `json:"call_seconds"`
}

type chainReport struct {
	Length int        `json:"length"`
	Rows   []chainRow `json:"rows"`
}

func (r *chainReport) writeTable(w io.Writer) {
	fmt.Fprintf(w, "chained calls: %d calls x = f(x) of x*1 on f32[rows,2] without waiting, then one wait\n", r.Length)
	fmt.Fprintf(w, "%-8s %-8s %-8s %12s %12s\n", "devices", "rows", "spec", "per chain", "per call")
	for _, row := range r.Rows {
		d := time.Duration(row.Chain * 1e9)
		fmt.Fprintf(w, "%-8d %-8d %-8s %12v %12v\n", row.Devices, row.Rows, row.Spec, d.Round(time.Microsecond),
			(d / time.Duration(r.Length)).Round(10*time.Nanosecond))
	}
}

func (r *chainReport) csvRecords() [][]string {
	out := [][]string{{"devices", "rows", "spec", "chain_seconds", "call_seconds"}}
	for _, row := range r.Rows {
		out = append(out, []string{strconv.Itoa(row.Devices), strconv.Itoa(row.Rows), row.Spec,
			strconv.FormatFloat(row.Chain, 'g', 6, 64), strconv.FormatFloat(row.Call, 'g', 6, 64)})
	}
	return out
}

// benchChain times chains of calls x = f(x) (x*1 on a small f32 array) that do not wait between
// calls, then wait once: the rate at which calls are dispatched. It runs on one device, and on
// all devices with the array split by rows.
func benchChain(c *pjrt.Client, length, iters int, p *progress) (*chainReport, error) {
	ds := jit.Devices(c)
	r := &chainReport{Length: length}
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
		var d time.Duration
		p.printf("xlamesh bench: chain on %d devices: ", nd)
		if _, err := p.step(fmt.Sprintf("%d chains of %d calls", iters+1, length), func() (err error) {
			d, err = timeChain(c, ds[:nd], spec, rows, length, iters)
			return err
		}); err != nil {
			return nil, fmt.Errorf("%d devices: %w", nd, err)
		}
		p.printf("\n")
		r.Rows = append(r.Rows, chainRow{Devices: nd, Rows: rows, Spec: spec.String(), Chain: d.Seconds(),
			Call: d.Seconds() / float64(length)})
	}
	return r, nil
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
	defer f.Close()
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

// transferRow is one line of the transfer figure.
type transferRow struct {
	Figure  string  `json:"figure"`
	Seconds float64 `json:"seconds"`
	MBs     float64 `json:"mb_s"`
	VsCopy  float64 `json:"vs_copy"`
}

type transferReport struct {
	Shape    []int         `json:"shape"`
	MiB      int           `json:"mib"`
	Sharding string        `json:"sharding"`
	Rows     []transferRow `json:"rows"`
}

func (r *transferReport) writeTable(w io.Writer) {
	fmt.Fprintf(w, "transfers: f32[%d,%d] (%d MiB), %s; Put waits for the array, copy is Go's copy of the same bytes\n",
		r.Shape[0], r.Shape[1], r.MiB, r.Sharding)
	fmt.Fprintf(w, "%-8s %12s %10s %10s\n", "figure", "per op", "MB/s", "vs copy")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "%-8s %12v %10.0f %10.2f\n", row.Figure, time.Duration(row.Seconds*1e9).Round(time.Microsecond), row.MBs, row.VsCopy)
	}
}

func (r *transferReport) csvRecords() [][]string {
	out := [][]string{{"figure", "seconds", "mb_s", "vs_copy"}}
	for _, row := range r.Rows {
		out = append(out, []string{row.Figure, strconv.FormatFloat(row.Seconds, 'g', 6, 64),
			strconv.FormatFloat(row.MBs, 'g', 6, 64), strconv.FormatFloat(row.VsCopy, 'g', 6, 64)})
	}
	return out
}

// transferCols is the row width of the transfer figure's array: 32 KiB rows, so that 256 MiB
// is 8192x8192, as in jit's BenchmarkPut256MiB.
const transferCols = 8192

// transferMesh returns the 2-D mesh shape the transfer figure splits its array over.
func transferMesh(d int) (x, y int) {
	y = 1
	if d%2 == 0 {
		y = 2
	}
	return d / y, y
}

// transferFits checks that -mib rows split over the transfer mesh (a usage error otherwise).
func transferFits(fs *flag.FlagSet, d, mib int) error {
	rows := mib << 20 / (transferCols * 4)
	if x, _ := transferMesh(d); rows%x != 0 {
		return usageError(fs, "transfer: -mib %d: %d rows do not split over %d devices; pick a multiple of %d MiB", mib, rows, x, x)
	}
	return nil
}

// benchTransfer times Put (host to devices, waited for) and ToHost (devices to host) of an f32
// array of mib MiB split over a 2-D mesh of all devices, against a Go copy of the same bytes.
func benchTransfer(c *pjrt.Client, mib, iters int, p *progress) (*transferReport, error) {
	ds := jit.Devices(c)
	rows := mib << 20 / (transferCols * 4)
	x, y := transferMesh(len(ds))
	if rows%x != 0 {
		return nil, fmt.Errorf("-mib %d: %d rows do not split over %d devices; pick a multiple of %d MiB", mib, rows, x, x)
	}
	m, err := mesh.New(ds, []int{x, y}, "x", "y")
	if err != nil {
		return nil, err
	}
	s, err := mesh.NewNamedSharding(m, mesh.P("x", "y"))
	if err != nil {
		return nil, err
	}
	shape := []int{rows, transferCols}
	host := make([]float32, rows*transferCols)
	for i := range host {
		host[i] = float32(i % 1000)
	}
	r := &transferReport{Shape: shape, MiB: mib, Sharding: s.String()}
	p.printf("xlamesh bench: transfers of %d MiB: ", mib)
	var put time.Duration
	if _, err := p.step("Put", func() (err error) {
		put, err = timeOp(iters, func() error {
			a, err := jit.Put(c, host, shape, s)
			if err != nil {
				return err
			}
			return waitClose(a)
		})
		return err
	}); err != nil {
		return nil, fmt.Errorf("put: %w", err)
	}
	a, err := jit.Put(c, host, shape, s)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	got, err := a.ToHost() // check the round trip once
	if err != nil {
		return nil, fmt.Errorf("to host: %w", err)
	}
	if !slices.Equal(got.([]float32), host) {
		return nil, errors.New("to host: the array read back differs from the one put")
	}
	var toHost time.Duration
	if _, err := p.step(", ToHost", func() (err error) {
		toHost, err = timeOp(iters, func() error {
			_, err := a.ToHostBytes()
			return err
		})
		return err
	}); err != nil {
		return nil, fmt.Errorf("to host: %w", err)
	}
	p.printf("\n")
	src := make([]byte, len(host)*4)
	dst := make([]byte, len(src))
	for i := range src {
		src[i] = byte(i)
	}
	cp, _ := timeOp(iters, func() error { copy(dst, src); return nil })
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Put", put}, {"ToHost", toHost}, {"copy", cp}} {
		r.Rows = append(r.Rows, transferRow{Figure: f.name, Seconds: f.d.Seconds(),
			MBs: float64(len(src)) / f.d.Seconds() / 1e6, VsCopy: f.d.Seconds() / cp.Seconds()})
	}
	return r, nil
}
