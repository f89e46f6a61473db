package stablehlo

import (
	"fmt"
	"slices"

	"github.com/xlamesh/xlamesh/mlir"
)

// Option configures a Module.
type Option func(*Module)

// ErrorPrefix makes the module's errors start with pkg instead of "stablehlo" (OpError.Pkg).
// A package that builds its own modules on top of this one (lower does) uses it so that
// its users see one name in every message.
func ErrorPrefix(pkg string) Option { return func(m *Module) { m.pkg = pkg } }

// Module builds one StableHLO module: a public @main and any private helper functions.
//
// Ops are added through *Function methods. The first error (a shape mismatch, a value used
// in the wrong function, ...) sticks: every later op is a no-op that returns the zero
// Value, and Build returns that error. So code reads like math and checks once:
//
//	m := stablehlo.NewModule("jit_f")
//	f := m.Main()
//	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 8, 2))
//	f.Return(f.Mul(x, f.Constant(2.0)))
//	text, err := m.Build()
//
// A Module is not safe for concurrent use while it is being built.
type Module struct {
	name     string
	pkg      string // error prefix; "" is "stablehlo"
	err      error
	main     *Function
	funcs    []*Function // in creation order
	channels int
	attrs    []Attr   // module attributes, in order
	preamble []string // top-level ops printed before the functions
	ctx      map[any]any
	hook     OpHook
	inHook   bool // the hook is running: the ops it adds do not call it
}

// NewModule starts a module named name (printed `module @name`, or `module @"my-fn"` when
// the name is not an MLIR identifier; empty prints no name). A name mlir.CheckName rejects
// (a backslash, a control byte or a byte outside ASCII) is recorded as the module's error,
// wrapping mlir.ErrName.
//
// The module starts with the attributes mhlo.num_partitions = 1 and mhlo.num_replicas = 1
// (see SetAttr).
func NewModule(name string, opts ...Option) *Module {
	m := &Module{name: name, attrs: []Attr{
		{"mhlo.num_partitions", "1 : i32"},
		{"mhlo.num_replicas", "1 : i32"},
	}}
	for _, o := range opts {
		o(m)
	}
	if name != "" {
		if err := mlir.CheckName("module", name); err != nil {
			m.err = &OpError{Pkg: m.pkg, Func: name, Op: "module", Operand: -1, Err: err}
		}
	}
	return m
}

// Err returns the first error recorded so far, or nil.
func (m *Module) Err() error { return m.err }

// Fail records err as the module's error unless one is recorded already. Ops record theirs
// with Function.Fail; Fail is for errors that belong to no op (a module-level symbol, a
// check at build time), normally an *OpError.
func (m *Module) Fail(err error) {
	if m.err == nil && err != nil {
		m.err = err
	}
}

// SetAttr sets the module attribute name to value, MLIR attribute text such as "8 : i32";
// an attribute already set keeps its place, a new one is appended, and an empty value
// removes it. Attributes print as `module @name attributes {name = value, ...}`.
func (m *Module) SetAttr(name, value string) {
	i := slices.IndexFunc(m.attrs, func(a Attr) bool { return a.Name == name })
	switch {
	case i >= 0 && value == "":
		m.attrs = slices.Delete(m.attrs, i, i+1)
	case i >= 0:
		m.attrs[i].Value = value
	case value != "":
		m.attrs = append(m.attrs, Attr{name, value})
	}
}

// Attrs returns the module's attributes in print order.
func (m *Module) Attrs() []Attr { return slices.Clone(m.attrs) }

// SetPreamble sets the top-level ops printed at the start of the module body, one per line
// and before the functions, replacing any set before: symbol declarations such as lower's
// `sdy.mesh @mesh = <["x"=4]>`. The text is printed as given.
func (m *Module) SetPreamble(ops ...string) { m.preamble = slices.Clone(ops) }

// SetContext attaches val to the module under key, for packages that extend the builder
// (lower keeps its own Module there). Function.Context finds it from every function and
// region of the module. Keys follow context.WithValue's advice: an unexported type.
func (m *Module) SetContext(key, val any) {
	if m.ctx == nil {
		m.ctx = make(map[any]any)
	}
	m.ctx[key] = val
}

// Context returns the value attached to the module under key, or nil.
func (m *Module) Context(key any) any { return m.ctx[key] }

// Main returns the public entry function @main, creating it on first use.
func (m *Module) Main() *Function {
	if m.main == nil {
		m.main = m.newFunc("main", true)
	}
	return m.main
}

// HasMain reports whether Main has been called, without creating @main.
func (m *Module) HasMain() bool { return m.main != nil }

// Func returns a new private function @name, to be called from others with Function.Call.
// A name that is already used (or "main"), or that mlir.CheckName rejects, records an error
// wrapping ErrFunction.
func (m *Module) Func(name string) *Function {
	f := m.newFunc(name, false)
	for _, g := range m.funcs[:len(m.funcs)-1] {
		if g.name == name {
			m.Fail(&OpError{Pkg: m.pkg, Func: name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: function @%s defined twice", ErrFunction, name)})
		}
	}
	if name == "" {
		m.Fail(&OpError{Pkg: m.pkg, Func: name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: empty function name", ErrFunction)})
	}
	if err := mlir.CheckName("function", name); err != nil {
		m.Fail(&OpError{Pkg: m.pkg, Func: name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: %w", ErrFunction, err)})
	}
	return f
}

// Funcs returns the module's top-level functions in creation order.
func (m *Module) Funcs() []*Function { return slices.Clone(m.funcs) }

func (m *Module) newFunc(name string, public bool) *Function {
	f := &Function{m: m, name: name, public: public}
	f.top = f
	m.funcs = append(m.funcs, f)
	return f
}

// nextChannel returns a fresh channel handle id (1, 2, ...) for a collective.
func (m *Module) nextChannel() int {
	m.channels++
	return m.channels
}

// Check returns the first error recorded while building (an *OpError), or an error if @main
// is missing or a function never returned. Build calls it; a package that adds its own
// checks before printing calls it first.
func (m *Module) Check() error {
	if m.err != nil {
		return m.err
	}
	if m.main == nil {
		m.err = &OpError{Pkg: m.pkg, Func: "main", Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: module has no @main", ErrFunction)}
		return m.err
	}
	for _, f := range m.funcs {
		if !f.returned {
			m.err = &OpError{Pkg: m.pkg, Func: f.name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: @%s has no return", ErrFunction, f.name)}
			return m.err
		}
	}
	return nil
}

// Build checks the module (see Check) and returns its MLIR text.
func (m *Module) Build() (string, error) {
	if err := m.Check(); err != nil {
		return "", err
	}
	return m.print(), nil
}
