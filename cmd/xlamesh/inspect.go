package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// inspectReport is what inspect prints: for each compiled program, what XLA's SPMD partitioner
// made of it.
type inspectReport struct {
	Program  string `json:"program"`
	Platform string `json:"platform"`
	Mesh     string `json:"mesh,omitempty"`
	// Devices are the device ids of the partitions: replica groups name partitions, and
	// partition i runs on Devices[i].
	Devices  []int       `json:"devices"`
	Programs []inspected `json:"programs"`
}

// inspected is one compiled program.
type inspected struct {
	Strategy    string           `json:"strategy"`
	In          []string         `json:"in"`
	Out         []string         `json:"out"`
	Collectives []collectiveJSON `json:"collectives"`
	BytesMoved  int64            `json:"bytes_moved"` // sent by one device, over all collectives
	// InMemory is the kind of memory each argument is expected in; empty when the plugin does
	// not say (PJRT_Executable_ParameterMemoryKinds).
	InMemory []string `json:"in_memory,omitempty"`
	// Memory is the compiler's memory plan per device (PJRT_Executable_GetCompiledMemoryStats);
	// nil with MemoryError when the plugin does not give it.
	Memory      *memoryJSON  `json:"memory"`
	MemoryError string       `json:"memory_error,omitempty"`
	Outputs     []outputJSON `json:"outputs"`
}

// collectiveJSON is a pjrt.Collective.
type collectiveJSON struct {
	Kind          string   `json:"kind"`
	Name          string   `json:"name"`
	Computation   string   `json:"computation"`
	Operands      []string `json:"operands"`
	Dims          []int    `json:"dims,omitempty"`
	ReplicaGroups [][]int  `json:"replica_groups,omitempty"`
	Pairs         [][2]int `json:"pairs,omitempty"`
	Bytes         int64    `json:"bytes"`
	BytesMoved    int64    `json:"bytes_moved"`
}

// memoryJSON is a pjrt.CompiledMemoryStats; Total is -1 when the plugin is older than it.
type memoryJSON struct {
	GeneratedCode     int64 `json:"generated_code"`
	Arguments         int64 `json:"arguments"`
	Outputs           int64 `json:"outputs"`
	Alias             int64 `json:"alias"`
	Temp              int64 `json:"temp"`
	Peak              int64 `json:"peak"`
	Total             int64 `json:"total"`
	HostGeneratedCode int64 `json:"host_generated_code"`
	HostArguments     int64 `json:"host_arguments"`
	HostOutputs       int64 `json:"host_outputs"`
	HostAlias         int64 `json:"host_alias"`
	HostTemp          int64 `json:"host_temp"`
}

// outputJSON is how XLA laid out one result: each device's shard and the HLO sharding.
type outputJSON struct {
	Shard    string `json:"shard"`
	Sharding string `json:"sharding"`
	// Memory is the kind of memory the result is placed in ("device", "pinned_host"); empty
	// when the plugin does not say (PJRT_Executable_OutputMemoryKinds).
	Memory string `json:"memory,omitempty"`
}

func inspect(w, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	kernelFlag := fs.String("kernel", "matmul", "what to compile: "+kernelNames()+", or a StableHLO file (.mlir), compiled as written")
	n := fs.Int("n", 0, "kernel size (default: 1024 for matmul, 512 for mlp and attention)")
	meshFlag := fs.String("mesh", "", "mesh axes as name=size,... (default: x=a,y=b, the squarest 2-D shape of the devices)")
	strat := fs.String("strategy", "", "one of the kernel's shardings, as bench names them (default: every one)")
	inFlag := fs.String("in", "", "the inputs' partition specs instead of -strategy, ';' between inputs: 'x,_;_,y' ('_' is None)")
	outFlag := fs.String("out", "", "the result's partition spec with -in: 'x,y'")
	format := fs.String("format", "table", "output format: table or json")
	partitioner := fs.String("partitioner", "shardy", "a file's partitioner: shardy (sdy.sharding) or gspmd (mhlo.sharding)")
	quiet := fs.Bool("q", false, "print no progress on stderr")
	var cf clientFlags
	cf.register(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	k := findKernel(*kernelFlag)
	switch {
	case fs.NArg() > 0:
		return usageError(fs, "unexpected argument %q (flags only)", fs.Arg(0))
	case *format != "table" && *format != "json":
		return usageError(fs, "-format %q: want table or json", *format)
	case set["n"] && *n < 1:
		return usageError(fs, "-n must be positive, got %d", *n)
	case (*inFlag == "") != (*outFlag == ""):
		return usageError(fs, "-in and -out go together")
	case *inFlag != "" && *strat != "":
		return usageError(fs, "-strategy names specs; -in and -out give them: use one")
	}
	part, err := parsePartitioner(*partitioner)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	if k == nil {
		for _, f := range []string{"n", "mesh", "strategy", "in", "out"} {
			if set[f] {
				return usageError(fs, "-%s applies to the built-in kernels (%s); a file is compiled as written", f, kernelNames())
			}
		}
	}
	var strategies []strategy
	if k != nil {
		if !set["n"] {
			*n = k.defaultN
		}
		if strategies, err = inspectStrategies(k, *strat, *inFlag, *outFlag); err != nil {
			return usageError(fs, "%v", err)
		}
	}

	p := &progress{}
	if !*quiet {
		p.w = stderr
	}
	c, err := cf.open()
	if err != nil {
		return err
	}
	defer c.Close()
	var r *inspectReport
	if k == nil {
		r, err = inspectFile(c, *kernelFlag, part, p)
	} else {
		m, merr := inspectMesh(c, *meshFlag, *inFlag != "")
		if merr != nil {
			return usageError(fs, "%v", merr)
		}
		r, err = inspectKernel(c, k, *n, m, strategies, p)
	}
	if err != nil {
		return err
	}
	if *format == "json" {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		e.SetEscapeHTML(false)
		return e.Encode(r)
	}
	r.writeTable(w)
	return nil
}

// inspectStrategies returns the kernel's strategies to compile: the one named, every one, or
// the specs of -in and -out.
func inspectStrategies(k *kernel, name, in, out string) ([]strategy, error) {
	if in != "" {
		parts := strings.Split(in, ";")
		if len(parts) != len(k.strategies[0].in) {
			return nil, fmt.Errorf("-in %q has %d specs; %s has %d inputs", in, len(parts), k.name, len(k.strategies[0].in))
		}
		s := strategy{name: "custom", out: parseSpec(out)}
		for _, p := range parts {
			s.in = append(s.in, parseSpec(p))
		}
		return []strategy{s}, nil
	}
	if name == "" {
		return k.strategies, nil
	}
	var names []string
	for _, s := range k.strategies {
		if s.name == name {
			return []strategy{s}, nil
		}
		names = append(names, s.name)
	}
	return nil, fmt.Errorf("-strategy %q: %s has %s", name, k.name, strings.Join(names, ", "))
}

// inspectMesh builds the mesh of -mesh on the client's first devices, or the squarest x, y
// mesh of all of them. The built-in strategies need axes named x and y; custom specs do not.
func inspectMesh(c *pjrt.Client, spec string, custom bool) (mesh.Mesh, error) {
	ds := jit.Devices(c)
	sizes, names := squarest(len(ds)), []string{"x", "y"}
	if spec != "" {
		var err error
		if sizes, names, err = parseMesh(spec); err != nil {
			return mesh.Mesh{}, err
		}
		if !custom && !slices.Equal(names, []string{"x", "y"}) {
			return mesh.Mesh{}, fmt.Errorf("-mesh %q: the kernels' strategies use the axes x and y (x=a,y=b); other axes need -in and -out", spec)
		}
	}
	size := 1
	for _, s := range sizes {
		size *= s
	}
	if size < 1 || size > len(ds) {
		return mesh.Mesh{}, fmt.Errorf("-mesh %q has %d devices; the client has %d", spec, size, len(ds))
	}
	return mesh.New(ds[:size], sizes, names...)
}

// squarest returns the 2-D mesh shape a×b of d devices with a <= b closest to square.
func squarest(d int) []int {
	a := 1
	for x := 1; x*x <= d; x++ {
		if d%x == 0 {
			a = x
		}
	}
	return []int{a, d / a}
}

// inspectKernel compiles kernel k for mesh m with each strategy and reports what the
// partitioner did.
func inspectKernel(c *pjrt.Client, k *kernel, n int, m mesh.Mesh, strategies []strategy, p *progress) (*inspectReport, error) {
	r := &inspectReport{Program: k.describe(n, len(jit.Devices(c))), Platform: c.Platform(), Mesh: m.String(), Devices: m.DeviceIDs()}
	for _, s := range strategies {
		p.printf("xlamesh inspect: %s: ", s.name)
		var exe *pjrt.Executable
		if _, err := p.step("compiling", func() (err error) {
			exe, err = compileKernel(c, k, n, m, s)
			return err
		}); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", s.name, s, err)
		}
		p.printf("\n")
		in := make([]string, len(s.in))
		for i, spec := range s.in {
			in[i] = spec.String()
		}
		prog, err := inspectExecutable(exe, s.name, in, []string{s.out.String()})
		exe.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		r.Programs = append(r.Programs, prog)
	}
	return r, nil
}

// inspectFile compiles a StableHLO file as written and reports what the partitioner did.
func inspectFile(c *pjrt.Client, path string, part pjrt.Partitioner, p *progress) (*inspectReport, error) {
	p.printf("xlamesh inspect: %s: ", path)
	var exe *pjrt.Executable
	if _, err := p.step("compiling", func() (err error) {
		exe, err = compileFile(c, path, part)
		return err
	}); err != nil {
		return nil, err
	}
	p.printf("\n")
	defer exe.Close()
	var in []string
	for _, s := range exe.InputShapes() {
		in = append(in, s.Aval())
	}
	prog, err := inspectExecutable(exe, "as written", in, nil)
	if err != nil {
		return nil, err
	}
	return &inspectReport{Program: path, Platform: c.Platform(), Devices: exe.DeviceAssignment(), Programs: []inspected{prog}}, nil
}

// inspectExecutable reads the collectives, memory plan and output layouts of exe.
func inspectExecutable(exe *pjrt.Executable, name string, in, out []string) (inspected, error) {
	r := inspected{Strategy: name, In: in, Out: out, Collectives: []collectiveJSON{}}
	cs, err := exe.Collectives()
	if err != nil {
		return r, err
	}
	for _, c := range cs {
		ops := make([]string, len(c.Operands))
		for i, s := range c.Operands {
			ops[i] = s.Aval()
		}
		r.Collectives = append(r.Collectives, collectiveJSON{Kind: c.Kind, Name: c.Name, Computation: c.Computation,
			Operands: ops, Dims: c.Dims, ReplicaGroups: c.ReplicaGroups, Pairs: c.Pairs, Bytes: c.Bytes, BytesMoved: c.BytesMoved})
		r.BytesMoved += c.BytesMoved
	}
	if m, err := exe.MemoryStats(); err != nil {
		r.MemoryError = err.Error()
	} else {
		r.Memory = &memoryJSON{GeneratedCode: m.GeneratedCode, Arguments: m.Arguments, Outputs: m.Outputs, Alias: m.Alias,
			Temp: m.Temp, Peak: m.Peak, Total: m.Total, HostGeneratedCode: m.HostGeneratedCode, HostArguments: m.HostArguments,
			HostOutputs: m.HostOutputs, HostAlias: m.HostAlias, HostTemp: m.HostTemp}
	}
	shardings, err := exe.OutputShardings()
	if err != nil {
		return r, err
	}
	shapes := exe.OutputShapes()
	kinds, _ := exe.OutputMemoryKinds() // nil when the plugin does not say
	for i, s := range shapes {
		o := outputJSON{Shard: s.Aval()}
		if i < len(shardings) {
			o.Sharding = shardings[i].String()
		}
		if i < len(kinds) {
			o.Memory = kinds[i]
		}
		r.Outputs = append(r.Outputs, o)
	}
	r.InMemory, _ = exe.InputMemoryKinds()
	if r.Out == nil {
		for _, o := range r.Outputs {
			r.Out = append(r.Out, o.Shard)
		}
	}
	return r, nil
}

// writeTable writes the report for a reader: per program, its collectives as a table, the
// memory plan and the output layouts.
func (r *inspectReport) writeTable(w io.Writer) {
	on := r.Mesh
	if on == "" {
		on = fmt.Sprintf("%d devices", len(r.Devices))
	}
	fmt.Fprintf(w, "%s on %s: %s devices %v (replica groups name partitions; partition i runs on the i-th device)\n",
		r.Program, on, r.Platform, r.Devices)
	for _, p := range r.Programs {
		fmt.Fprintf(w, "\n%s: %s -> %s\n", p.Strategy, strings.Join(p.In, " "), strings.Join(p.Out, " "))
		if len(p.Collectives) == 0 {
			fmt.Fprintf(w, "  collectives: none\n")
		} else {
			fmt.Fprintf(w, "  collectives: %d; each device sends %s in all\n", len(p.Collectives), humanBytes(p.BytesMoved))
			fmt.Fprintf(w, "    %-20s %-24s %-5s %-28s %10s %12s  %s\n", "kind", "operands", "dims", "replica groups", "bytes", "sent/device", "instruction")
			for _, c := range p.Collectives {
				groups := fmt.Sprint(c.ReplicaGroups)
				if len(c.Pairs) > 0 {
					groups = fmt.Sprint("pairs ", c.Pairs)
				}
				dims := "-"
				if len(c.Dims) > 0 {
					dims = fmt.Sprint(c.Dims)
				}
				fmt.Fprintf(w, "    %-20s %-24s %-5s %-28s %10d %12d  %s\n", c.Kind, strings.Join(c.Operands, ", "), dims, groups,
					c.Bytes, c.BytesMoved, c.Name)
			}
		}
		if m := p.Memory; m != nil {
			fmt.Fprintf(w, "  memory per device: arguments %s, outputs %s, aliased %s, temp %s, generated code %s, peak %s",
				humanBytes(m.Arguments), humanBytes(m.Outputs), humanBytes(m.Alias), humanBytes(m.Temp), humanBytes(m.GeneratedCode),
				humanBytes(m.Peak))
			if m.Total >= 0 {
				fmt.Fprintf(w, ", total %s", humanBytes(m.Total))
			}
			fmt.Fprintln(w)
			if m.HostArguments+m.HostOutputs+m.HostTemp+m.HostGeneratedCode > 0 {
				fmt.Fprintf(w, "  host memory per device: arguments %s, outputs %s, aliased %s, temp %s, generated code %s\n",
					humanBytes(m.HostArguments), humanBytes(m.HostOutputs), humanBytes(m.HostAlias), humanBytes(m.HostTemp),
					humanBytes(m.HostGeneratedCode))
			}
		} else {
			fmt.Fprintf(w, "  memory per device: not reported (%s)\n", p.MemoryError)
		}
		if slices.ContainsFunc(p.InMemory, func(k string) bool { return k != mesh.MemoryDevice }) {
			fmt.Fprintf(w, "  arguments in memory: %s\n", strings.Join(p.InMemory, " "))
		}
		for i, o := range p.Outputs {
			fmt.Fprintf(w, "  output %d: %s on each device, sharding %s", i, o.Shard, o.Sharding)
			if o.Memory != "" {
				fmt.Fprintf(w, ", in %s memory", o.Memory)
			}
			fmt.Fprintln(w)
		}
	}
}
