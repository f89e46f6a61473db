package pjrt

// #include <stdlib.h>
// #include "xlamesh_pjrt.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"runtime/cgo"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/xlamesh/xlamesh/internal/closegate"
	"github.com/xlamesh/xlamesh/pjrt/kv"
)

// DefaultCPUDeviceCount is the number of CPU devices Open asks the CPU plugin for.
const DefaultCPUDeviceCount = 8

// MaxCPUDeviceCount is the most CPU devices Open asks for: the plugin reads the count as a C int
// and silently gives its default for values it cannot use.
const MaxCPUDeviceCount = 1 << 16

// Option configures Open.
type Option func(*openConfig)

type openConfig struct {
	plugin      string
	cpuCount    int
	cpuCountSet bool
	options     map[string]any
	kv          kv.Store
	dist        kv.Distributed
	cacheDir    string
	cacheSet    bool
	logger      *slog.Logger
	maxInFlight int
	noLAPACK    bool
}

// WithPlugin selects the plugin by path or name (see LoadPlugin). The default is
// $XLAMESH_PJRT_PLUGIN, or else the pinned CPU plugin.
func WithPlugin(nameOrPath string) Option { return func(c *openConfig) { c.plugin = nameOrPath } }

// WithCPUDeviceCount sets the number of devices of a CPU client. It is sent as the
// "cpu_device_count" create option, which only CPU plugins understand. Without it Open asks for
// DefaultCPUDeviceCount devices, and a plugin that refuses that option name (GPU and TPU plugins
// validate names) is created without it. A count below 1 makes Open fail with ErrDevice.
func WithCPUDeviceCount(n int) Option {
	return func(c *openConfig) { c.cpuCount, c.cpuCountSet = n, true }
}

// WithCreateOption passes a PJRT_Client_Create option to the plugin, e.g. the GPU plugin's
// "memory_fraction" (float32) or "visible_devices" ([]int64). The value is a string, bool,
// int or int64, []int or []int64, float32 or float64 (sent as float32); any other type makes Open
// fail with ErrCreateOption. GPU plugins reject names they do not know.
func WithCreateOption(name string, value any) Option {
	return func(c *openConfig) {
		if c.options == nil {
			c.options = map[string]any{}
		}
		c.options[name] = value
	}
}

// WithKeyValueStore hands the plugin a key-value store shared by the processes of a
// multi-process client (PJRT_Client_Create's kv_get, kv_try_get and kv_put callbacks). GPU and
// TPU plugins exchange topology and NCCL ids through it; the CPU plugins never call it.
func WithKeyValueStore(store kv.Store) Option { return func(c *openConfig) { c.kv = store } }

// WithLogger sets where the client logs what it decides on its own (compile cache misses and
// write failures). The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *openConfig) { c.logger = l } }

// DefaultMaxInFlight is the default number of executions a client runs at once (WithMaxInFlight).
const DefaultMaxInFlight = 32

// WithMaxInFlight bounds the number of executions the client has started and not yet finished,
// like XLA's max_inflight_computations: Execute blocks beyond it, which keeps the memory of
// queued results bounded. The default is DefaultMaxInFlight; n below 1 makes Open fail with
// ErrExecute.
func WithMaxInFlight(n int) Option { return func(c *openConfig) { c.maxInFlight = n } }

// Client is an open PJRT client: a plugin plus the devices it drives. Close it when done; the
// buffers and executables it made become invalid then.
type Client struct {
	plugin          *Plugin
	api             *api
	c               *C.PJRT_Client
	platform        string
	platformVersion string
	processIndex    int
	devices         []*Device
	addressable     []*Device
	byID            map[int]*Device
	kv              cgo.Handle     // 0 without a key-value store
	kvArg           unsafe.Pointer // the C word holding kv, passed to the callbacks
	cache           *compileCache
	logger          *slog.Logger
	stats           compileStats
	inflight        *C.xm_inflight // counts and bounds the executions in flight
	hostMemory      bool           // device memory is host memory (the CPU platform)

	memMu    sync.Mutex                 // guards memories
	memories map[*C.PJRT_Memory]*Memory // every memory described so far, by handle

	resMu   sync.Mutex               // guards the registries below
	exes    map[*Executable]struct{} // live executables, closed by Close
	bufs    *bufferState             // live buffers (a list through prev and next), destroyed by Close
	hooks   map[int]func()           // OnClose callbacks
	hookSeq int
	// gate counts the calls using the client (package internal/closegate): Close marks it closed without
	// waiting on them, and the last call to leave starts the teardown, which waits for the
	// executions in flight and then destroys everything (released is closed when it is done,
	// closeErr its error).
	gate     closegate.Gate
	released chan struct{}
	closeErr error
}

// Open loads a plugin and creates a client. With no options it opens the pinned CPU plugin with
// DefaultCPUDeviceCount devices; the error says how to install the plugin when it is missing.
// A plugin that cannot create a client (e.g. a GPU plugin on a machine without a GPU) gives an
// *Error matching ErrCreateClient with the plugin's message.
func Open(opts ...Option) (*Client, error) {
	cfg := openConfig{logger: slog.Default(), maxInFlight: DefaultMaxInFlight}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxInFlight < 1 {
		return nil, fmt.Errorf("pjrt: open: %w: at most %d executions in flight; need at least 1", ErrExecute, cfg.maxInFlight)
	}
	dist, err := newDistState(cfg.dist)
	if err != nil {
		return nil, err
	}
	name := cfg.plugin
	if name == "" {
		if name = os.Getenv(EnvPlugin); name == "" {
			name = "cpu"
			if dist != nil && dist.n > 1 {
				if path, err := MultiProcessCPUPlugin(); err == nil {
					name = path
				}
			}
		}
	}
	if cfg.cpuCountSet && (cfg.cpuCount < 1 || cfg.cpuCount > MaxCPUDeviceCount) {
		return nil, fmt.Errorf("pjrt: open: %w: CPU device count %d must be in [1, %d]", ErrDevice, cfg.cpuCount, MaxCPUDeviceCount)
	}
	if v, ok := cfg.options["cpu_device_count"]; ok && !cfg.cpuCountSet {
		// The option given by name counts as WithCPUDeviceCount, checked the same way.
		n, isInt := v.(int)
		if n64, is64 := v.(int64); is64 {
			n, isInt = int(n64), n64 >= math.MinInt32 && n64 <= math.MaxInt32
		}
		if !isInt || n < 1 || n > MaxCPUDeviceCount {
			return nil, fmt.Errorf("pjrt: open: %w: create option cpu_device_count=%v must be an int in [1, %d]", ErrDevice, v, MaxCPUDeviceCount)
		}
		cfg.cpuCount, cfg.cpuCountSet = n, true
		delete(cfg.options, "cpu_device_count")
	}
	p, err := LoadPlugin(name)
	if err != nil {
		return nil, err
	}
	cache, err := openCompileCache(cfg, p)
	if err != nil {
		return nil, err
	}
	var kvHandle cgo.Handle
	var kvArg unsafe.Pointer
	if cfg.kv == nil && dist != nil {
		cfg.kv = prefixStore{prefix: platformPrefix(p.Path()), store: dist.d}
	}
	if cfg.kv != nil {
		kvHandle = cgo.NewHandle(cfg.kv)
	}
	var create func(cpuCount int, options map[string]any) (*C.PJRT_Client, error)
	create = func(cpuCount int, base map[string]any) (*C.PJRT_Client, error) {
		options := maps.Clone(base)
		if options == nil {
			options = map[string]any{}
		}
		if cpuCount > 0 {
			options["cpu_device_count"] = int64(cpuCount)
		}
		dist.addOptions(options)
		values, free, err := newNamedValues(options)
		if err != nil {
			return nil, err
		}
		defer free()
		args := C.PJRT_Client_Create_Args{create_options: values, num_options: C.size_t(len(options))}
		if kvHandle != 0 {
			kvArg = setKeyValueCallbacks(&args, kvHandle)
		}
		err = p.api.toError("create client with "+p.String(), ErrCreateClient, C.xm_Client_Create(p.api.p, &args))
		if err != nil && kvArg != nil {
			C.free(kvArg)
			kvArg = nil
		}
		if err != nil && dist.retry(err) {
			return create(cpuCount, base) // the plugin refused node_id: it takes process_id instead
		}
		return args.client, err
	}
	var client *C.PJRT_Client
	if cfg.cpuCountSet {
		client, err = create(cfg.cpuCount, cfg.options)
	} else {
		// CPU plugins get DefaultCPUDeviceCount devices; plugins that validate option names and do
		// not know cpu_device_count (GPU, TPU) are created without it, and with the options of
		// JAX's GPU memory variables (gpuenv.go).
		client, err = create(DefaultCPUDeviceCount, cfg.options)
		var perr *Error
		if errors.As(err, &perr) && perr.Code == InvalidArgument && strings.Contains(perr.Msg, "cpu_device_count") {
			var options map[string]any
			if options, err = withGPUEnv(cfg.options); err == nil {
				client, err = create(0, options)
			}
		}
	}
	if err != nil {
		if kvHandle != 0 {
			kvHandle.Delete()
		}
		return nil, err
	}
	a := p.api
	c := &Client{plugin: p, api: a, c: client, byID: map[int]*Device{}, kv: kvHandle, kvArg: kvArg,
		cache: cache, logger: cfg.logger, inflight: C.xm_inflight_new(C.int(cfg.maxInFlight)),
		exes: map[*Executable]struct{}{}, hooks: map[int]func(){}, released: make(chan struct{})}
	c.gate.Release = func() { go c.teardown() }
	if c.inflight == nil {
		_ = c.destroy()
		return nil, fmt.Errorf("pjrt: open: %w: out of host memory", ErrCreateClient)
	}
	if err := c.describe(); err != nil {
		_ = c.destroy()
		return nil, err
	}
	if err := dist.formGlobal(c); err != nil {
		_ = c.destroy()
		return nil, err
	}
	if c.platform == "cpu" && !cfg.noLAPACK {
		p.registerLAPACK() // lapack.go: before this client compiles anything
	}
	return c, nil
}

// describe reads the client's platform, its devices and their memories.
func (c *Client) describe() error {
	a := c.api
	pn := C.PJRT_Client_PlatformName_Args{client: c.c}
	if err := a.toError("platform name", ErrCreateClient, C.xm_Client_PlatformName(a.p, &pn)); err != nil {
		return err
	}
	c.platform = goString(pn.platform_name, pn.platform_name_size)
	c.hostMemory = c.platform == "cpu"
	pv := C.PJRT_Client_PlatformVersion_Args{client: c.c}
	if err := a.toError("platform version", ErrCreateClient, C.xm_Client_PlatformVersion(a.p, &pv)); err != nil {
		return err
	}
	c.platformVersion = goString(pv.platform_version, pv.platform_version_size)
	pi := C.PJRT_Client_ProcessIndex_Args{client: c.c}
	if err := a.toError("process index", ErrCreateClient, C.xm_Client_ProcessIndex(a.p, &pi)); err != nil {
		return err
	}
	c.processIndex = int(pi.process_index)

	all := C.PJRT_Client_Devices_Args{client: c.c}
	if err := a.toError("list devices", ErrDevice, C.xm_Client_Devices(a.p, &all)); err != nil {
		return err
	}
	for _, pd := range cSlice(all.devices, all.num_devices) {
		d, err := newDevice(c, pd)
		if err != nil {
			return err
		}
		if _, dup := c.byID[d.info.id]; dup {
			return fmt.Errorf("pjrt: open: %w: the plugin lists device id %d twice", ErrDevice, d.info.id)
		}
		c.devices = append(c.devices, d)
		c.byID[d.info.id] = d
	}
	ad := C.PJRT_Client_AddressableDevices_Args{client: c.c}
	if err := a.toError("list addressable devices", ErrDevice, C.xm_Client_AddressableDevices(a.p, &ad)); err != nil {
		return err
	}
	for _, pd := range cSlice(ad.addressable_devices, ad.num_addressable_devices) {
		found := deviceOf(c.devices, pd)
		if found == nil {
			return fmt.Errorf("pjrt: open: %w: an addressable device is not among the client's devices", ErrDevice)
		}
		c.addressable = append(c.addressable, found)
	}
	c.readMemories()
	return nil
}

// deviceOf returns the device of ds whose C handle is pd, or nil.
func deviceOf(ds []*Device, pd *C.PJRT_Device) *Device {
	for _, d := range ds {
		if d.c == pd {
			return d
		}
	}
	return nil
}

// cSlice views a C array of n elements as a Go slice (nil when empty).
func cSlice[T any](p *T, n C.size_t) []T {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice(p, int(n))
}

// newNamedValues builds a C array of PJRT_NamedValue from Go values, in name order. free
// releases it.
func newNamedValues(values map[string]any) (*C.PJRT_NamedValue, func(), error) {
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	var allocs []unsafe.Pointer
	free := func() {
		for _, p := range allocs {
			C.free(p)
		}
	}
	if len(names) == 0 {
		return nil, free, nil
	}
	list := (*C.PJRT_NamedValue)(C.calloc(C.size_t(len(names)), C.size_t(unsafe.Sizeof(C.PJRT_NamedValue{}))))
	allocs = append(allocs, unsafe.Pointer(list))
	for i, name := range names {
		v := &unsafe.Slice(list, len(names))[i]
		v.struct_size = C.PJRT_NamedValue_STRUCT_SIZE
		cname := C.CString(name)
		allocs = append(allocs, unsafe.Pointer(cname))
		v.name, v.name_size = cname, C.size_t(len(name))
		u := unsafe.Pointer(&v.anon0[0])
		v.value_size = 1
		switch x := values[name].(type) {
		case string:
			s := C.CString(x)
			allocs = append(allocs, unsafe.Pointer(s))
			v._type, v.value_size = C.PJRT_NamedValue_kString, C.size_t(len(x))
			*(**C.char)(u) = s
		case bool:
			v._type = C.PJRT_NamedValue_kBool
			*(*C.bool)(u) = C.bool(x)
		case int:
			v._type = C.PJRT_NamedValue_kInt64
			*(*C.int64_t)(u) = C.int64_t(x)
		case int64:
			v._type = C.PJRT_NamedValue_kInt64
			*(*C.int64_t)(u) = C.int64_t(x)
		case float32:
			v._type = C.PJRT_NamedValue_kFloat
			*(*C.float)(u) = C.float(x)
		case float64:
			if math.Abs(x) > math.MaxFloat32 && !math.IsInf(x, 0) {
				free()
				return nil, nil, fmt.Errorf("pjrt: create option %q: %w: %g does not fit a float32", name, ErrCreateOption, x)
			}
			v._type = C.PJRT_NamedValue_kFloat
			*(*C.float)(u) = C.float(x)
		case []int64, []int:
			var ints []int64
			if xs, ok := x.([]int); ok {
				for _, n := range xs {
					ints = append(ints, int64(n))
				}
			} else {
				ints = x.([]int64)
			}
			arr := (*C.int64_t)(C.calloc(C.size_t(max(1, len(ints))), 8))
			allocs = append(allocs, unsafe.Pointer(arr))
			for j, n := range ints {
				unsafe.Slice(arr, len(ints))[j] = C.int64_t(n)
			}
			v._type, v.value_size = C.PJRT_NamedValue_kInt64List, C.size_t(len(ints))
			*(**C.int64_t)(u) = arr
		default:
			free()
			return nil, nil, fmt.Errorf("pjrt: create option %q: %w: unsupported value type %T "+
				"(use string, bool, int, int64, []int, []int64, float32 or float64)", name, ErrCreateOption, x)
		}
	}
	return list, free, nil
}

// Plugin returns the plugin the client runs on.
func (c *Client) Plugin() *Plugin { return c.plugin }

// Platform returns the platform name, e.g. "cpu", "cuda", "tpu".
func (c *Client) Platform() string { return c.platform }

// PlatformVersion returns the platform's version string as the plugin reports it.
func (c *Client) PlatformVersion() string { return c.platformVersion }

// ProcessIndex returns the index of this process among the processes of a multi-process client (0).
func (c *Client) ProcessIndex() int { return c.processIndex }

// Devices returns all devices of the client, addressable or not, in the plugin's order.
func (c *Client) Devices() []*Device { return append([]*Device(nil), c.devices...) }

// AddressableDevices returns the devices this process can place buffers on and run code on.
func (c *Client) AddressableDevices() []*Device { return append([]*Device(nil), c.addressable...) }

// Device returns the device with the given global id.
func (c *Client) Device(id int) (*Device, error) {
	d, ok := c.byID[id]
	if !ok {
		return nil, fmt.Errorf("pjrt: %w: no device with id %d (client has %d devices)", ErrDevice, id, len(c.devices))
	}
	return d, nil
}

// String returns e.g. "Client(cpu, 8 devices)".
func (c *Client) String() string {
	return fmt.Sprintf("Client(%s, %d devices)", c.platform, len(c.devices))
}

// Close is CloseContext bounded by CloseTimeout.
func (c *Client) Close() error {
	ctx, cancel := closeContext()
	defer cancel()
	return c.CloseContext(ctx)
}

// CloseContext destroys the client and everything it owns. It first runs the OnClose callbacks
// (a jit.Function frees the executables it compiled for the client), then closes the client:
// later calls fail with ErrClosed at once. When the calls and executions in flight have ended,
// every executable and buffer of the client still open is closed (later Close calls on them are
// no-ops) and the client is destroyed; CloseContext waits for that until ctx is done.
//
// PJRT cannot interrupt an execution, nor destroy a client one still runs on. When ctx ends
// first (an execution that never ends, for one), CloseContext returns a *StillRunningError
// (matching ErrStillRunning) that counts the calls and executions still running; the client,
// its buffers and executables are then destroyed when the last of them ends, in the background
// (a goroutine and its thread wait for that), and never if it never ends: the plugin client
// stays alive for the rest of the process, deliberately, rather than be freed under a running
// program. CloseContext never blocks other goroutines' calls on other clients. It is
// idempotent: a later call waits again, and returns nil (or the destroy's error) once the
// client is destroyed.
func (c *Client) CloseContext(ctx context.Context) error {
	if c == nil {
		return nil
	}
	if ctx == nil {
		return fmt.Errorf("pjrt: close: %w", errNilContext)
	}
	c.resMu.Lock()
	hooks := make([]func(), 0, len(c.hooks))
	ids := make([]int, 0, len(c.hooks))
	for id := range c.hooks {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		hooks = append(hooks, c.hooks[id])
	}
	c.hooks = map[int]func(){}
	c.resMu.Unlock()
	for _, h := range hooks {
		h()
	}
	c.gate.Close()
	select {
	case <-c.released:
		return c.closeErr
	case <-ctx.Done():
		select {
		case <-c.released:
			return c.closeErr
		default:
		}
	}
	return fmt.Errorf("pjrt: close: %w", &StillRunningError{What: c.String(), Calls: c.gate.Calls(), Executions: c.inFlight()})
}

// teardown destroys the client once its gate is closed and empty: it waits for the executions
// in flight (on its own goroutine: the wait is a cgo call that only their end ends), then closes
// what the client owns and destroys it.
func (c *Client) teardown() {
	C.xm_inflight_drain(c.inflight)
	c.resMu.Lock()
	exes := c.exes
	c.exes = map[*Executable]struct{}{}
	var bufs []*bufferState
	for st := c.bufs; st != nil; {
		next := st.next
		st.prev, st.next = nil, nil
		bufs = append(bufs, st)
		st = next
	}
	c.bufs = nil
	c.resMu.Unlock()
	for _, st := range bufs {
		// No call is inside the client and no execution runs; a Wait (which needs no client
		// call) may still be leaving a buffer: its exit frees it, before the client goes.
		if !st.users.Close() {
			for !st.freed.Load() {
				time.Sleep(100 * time.Microsecond)
			}
		}
		_ = st.free()
	}
	for e := range exes {
		// No Execute is inside e (each holds the client's gate too); other calls on it are
		// short reads of the program, waited for here.
		e.gate.Close()
		e.gate.Wait(context.Background())
	}
	c.resMu.Lock()
	err := c.destroy()
	c.resMu.Unlock()
	c.closeErr = err
	close(c.released)
}

// OnClose registers f to run at the start of Close, before anything is destroyed (calls may
// still use the client from f). The returned function unregisters it. A jit.Function uses it to
// free the executables it compiled for the client.
func (c *Client) OnClose(f func()) (remove func()) {
	c.resMu.Lock()
	defer c.resMu.Unlock()
	c.hookSeq++
	id := c.hookSeq
	c.hooks[id] = f
	return func() {
		c.resMu.Lock()
		defer c.resMu.Unlock()
		delete(c.hooks, id)
	}
}

// track and untrack keep the registries of what the client owns.
func (c *Client) trackBuffer(st *bufferState) {
	c.resMu.Lock()
	st.next = c.bufs
	if c.bufs != nil {
		c.bufs.prev = st
	}
	c.bufs = st
	c.resMu.Unlock()
}

// trackBuffers tracks a block of buffer states under one lock.
func (c *Client) trackBuffers(states []bufferState) {
	c.resMu.Lock()
	for i := range states {
		st := &states[i]
		st.next = c.bufs
		if c.bufs != nil {
			c.bufs.prev = st
		}
		c.bufs = st
	}
	c.resMu.Unlock()
}

func (c *Client) untrackBuffer(st *bufferState) {
	c.resMu.Lock()
	if st.prev != nil {
		st.prev.next = st.next
	} else if c.bufs == st {
		c.bufs = st.next
	}
	if st.next != nil {
		st.next.prev = st.prev
	}
	st.prev, st.next = nil, nil
	c.resMu.Unlock()
}

func (c *Client) trackExecutable(e *Executable, on bool) {
	c.resMu.Lock()
	if on {
		c.exes[e] = struct{}{}
	} else {
		delete(c.exes, e)
	}
	c.resMu.Unlock()
}

func (c *Client) destroy() error {
	args := C.PJRT_Client_Destroy_Args{client: c.c}
	err := c.api.toError("destroy client", ErrClosed, C.xm_Client_Destroy(c.api.p, &args))
	if c.inflight != nil {
		C.xm_inflight_drain(c.inflight) // the plugin has finished every execution by now
		C.xm_inflight_free(c.inflight)
		c.inflight = nil
	}
	if c.kv != 0 {
		c.kv.Delete()
		C.free(c.kvArg)
		c.kv, c.kvArg = 0, nil
	}
	return err
}

// use marks the start of a call that needs the client open; the caller must call the returned
// function when done. It fails with ErrClosed after Close.
func (c *Client) use(op string) (func(), error) {
	if err := c.enter(op); err != nil {
		return nil, err
	}
	return c.exit, nil
}

// inFlight returns the number of executions in flight (0 once the client is destroyed).
func (c *Client) inFlight() int {
	c.resMu.Lock()
	defer c.resMu.Unlock()
	if c.inflight == nil {
		return 0 // destroyed
	}
	return int(C.xm_inflight_count(c.inflight))
}

// enter is use without the function value, for hot paths: the caller calls exit when done.
func (c *Client) enter(op string) error {
	if !c.gate.Enter() {
		return fmt.Errorf("pjrt: %s: client %w", op, ErrClosed)
	}
	return nil
}

// exit ends what enter began.
func (c *Client) exit() { c.gate.Exit() }
