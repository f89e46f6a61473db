package pjrt

import (
	"fmt"
	"sync"

	gopjrt "github.com/gomlx/gopjrt/pjrt"
)

// DefaultCPUDeviceCount is the number of CPU devices Open asks the CPU plugin for.
const DefaultCPUDeviceCount = 8

// Option configures Open.
type Option func(*openConfig)

type openConfig struct {
	anyAPI   bool
	plugin   string
	cpuCount int
	options  map[string]any
}

// WithPlugin selects the plugin by path or name (see LoadPlugin). The default is
// $XLAMESH_PJRT_PLUGIN, or else the pinned CPU plugin.
func WithPlugin(nameOrPath string) Option { return func(c *openConfig) { c.plugin = nameOrPath } }

// WithCPUDeviceCount sets the number of devices of a CPU client (default DefaultCPUDeviceCount).
// It is sent as the "cpu_device_count" create option, which only CPU plugins understand.
func WithCPUDeviceCount(n int) Option { return func(c *openConfig) { c.cpuCount = n } }

// WithAnyAPIVersion skips the check that the plugin's PJRT C API version is within
// [MinAPIMinor, MaxAPIMinor]. Newer plugins accept gopjrt v0.10.0's smaller structs only where XLA
// relaxed its size checks; docs/plugins.md lists the plugins tried this way. Note that a plugin
// already loaded with the check keeps its first result.
func WithAnyAPIVersion() Option { return func(c *openConfig) { c.anyAPI = true } }

// WithCreateOption passes a raw PJRT_Client_Create option to the plugin (value: string, int64,
// []int64, float32 or bool), e.g. GPU plugins' "memory_fraction".
func WithCreateOption(name string, value any) Option {
	return func(c *openConfig) {
		if c.options == nil {
			c.options = map[string]any{}
		}
		c.options[name] = value
	}
}

// Client is an open PJRT client: a plugin plus the devices it drives. Close it when done; the
// buffers and executables it made become invalid then.
type Client struct {
	plugin          *Plugin
	g               *gopjrt.Client
	platform        string
	platformVersion string
	processIndex    int
	devices         []*Device
	addressable     []*Device
	byID            map[int]*Device
	mu              sync.RWMutex // guards closed against use in flight
	closed          bool
}

// Open loads a plugin and creates a client. With no options it opens the pinned CPU plugin with
// DefaultCPUDeviceCount devices; the error says how to install the plugin when it is missing.
func Open(opts ...Option) (*Client, error) {
	cfg := openConfig{}
	for _, o := range opts {
		o(&cfg)
	}
	name := cfg.plugin
	if name == "" {
		name = "cpu"
	}
	p, err := loadPlugin(name, !cfg.anyAPI)
	if err != nil {
		return nil, err
	}
	isCPU := name == "cpu" || cfg.cpuCount > 0
	if cfg.cpuCount == 0 {
		cfg.cpuCount = DefaultCPUDeviceCount
	}
	if cfg.cpuCount < 1 {
		return nil, fmt.Errorf("pjrt: %w: CPU device count %d must be at least 1", ErrDevice, cfg.cpuCount)
	}
	create := gopjrt.NamedValuesMap{}
	if isCPU {
		create["cpu_device_count"] = int64(cfg.cpuCount)
	}
	for k, v := range cfg.options {
		if i, ok := v.(int); ok {
			v = int64(i)
		}
		create[k] = v
	}
	g, err := p.g.NewClient(create)
	if err != nil {
		return nil, wrapGopjrt("create client", ErrPluginNotFound, err)
	}
	c := &Client{plugin: p, g: g, platform: g.Platform(), platformVersion: g.PlatformVersion(),
		processIndex: g.ProcessIndex(), byID: map[int]*Device{}}
	all, err := g.AllDevices()
	if err != nil {
		_ = g.Destroy()
		return nil, wrapGopjrt("list devices", ErrDevice, err)
	}
	for _, gd := range all {
		info, err := readDeviceInfo(p.g, gd)
		if err != nil {
			_ = g.Destroy()
			return nil, err
		}
		d := &Device{client: c, g: gd, info: info}
		c.devices = append(c.devices, d)
		c.byID[info.id] = d
	}
	// Addressable devices in the client's own order (the order gopjrt uses for placement).
	for _, gd := range g.AddressableDevices() {
		info, err := readDeviceInfo(p.g, gd)
		if err != nil {
			_ = g.Destroy()
			return nil, err
		}
		d, ok := c.byID[info.id]
		if !ok {
			_ = g.Destroy()
			return nil, fmt.Errorf("pjrt: %w: addressable device %d is not among the client's devices", ErrDevice, info.id)
		}
		d.g = gd // gopjrt compares addressable devices by identity
		c.addressable = append(c.addressable, d)
	}
	return c, nil
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

// Close destroys the client. It waits for calls in flight, and is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return wrapGopjrt("destroy client", ErrClosed, c.g.Destroy())
}

// use marks the start of a call that needs the client open; the caller must call the returned
// function when done. It fails with ErrClosed after Close.
func (c *Client) use(op string) (func(), error) {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return nil, fmt.Errorf("pjrt: %s: client %w", op, ErrClosed)
	}
	return c.mu.RUnlock, nil
}
