package pjrt

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xlamesh/xlamesh/pjrt/kv"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// ErrDistributed: a multi-process client could not be formed — the job's description is
// invalid, the plugin ignores the process id, or the processes disagree about their devices.
var ErrDistributed = errors.New("multi-process client failed")

// WithDistributed makes Open create this process's client of a multi-process job (d, a
// kv.Distributed such as package distributed's Job), the way jax.distributed.initialize prepares
// JAX's backends:
//
//   - The plugin gets the job's store as its key-value callbacks (kv_get, kv_try_get, kv_put),
//     every key prefixed "<platform>:" as JAX does, unless WithKeyValueStore gave another store.
//   - It gets the create options "node_id" and "num_nodes" (GPU and TPU plugins), or, when it
//     refuses those names, "process_id" (the CPU plugin of PJRT API 0.115).
//   - When the plugin's client lists only this process's devices (CPU plugins form no global
//     client), the processes publish their devices through the store and every client then lists
//     all of them: Devices is the global list ordered by process, AddressableDevices this
//     process's. Devices of other processes carry what their process reported (id, process
//     index, kind, attributes) and are never addressable.
//
// Without WithPlugin and $XLAMESH_PJRT_PLUGIN, a job of several processes opens the pinned CPU
// plugin of PJRT API 0.115 (MultiProcessCPUPlugin, the default CPU plugin), since the other
// pinned one, xla-cpu-pjrt 0.0.1, ignores process ids. Open fails with an error wrapping ErrDistributed when d's process id is out of
// range, when the plugin ignores it (every process's client reports process index 0), or when
// two processes report the same device id; the other processes see the same error. Waiting for
// the other processes is bounded by d.InitTimeout(); a store error (a lost process, a timeout)
// is returned wrapped.
//
// Why an interface rather than a struct of addresses: opening a client is a step of a job that
// lives longer than it (barriers, shutdown, failure detection), so the job is made first and
// handed over, `pjrt.Open(pjrt.WithDistributed(job))`, and package pjrt needs no etcd.
func WithDistributed(d kv.Distributed) Option { return func(c *openConfig) { c.dist = d } }

// MultiProcessCPUPluginName is the short name (pjrt/plugins.Known) of the pinned CPU plugin that
// can be one process of a multi-process job: lammps-jax-pjrt-cpu 0.11.2, PJRT API 0.115, the
// default CPU plugin.
const MultiProcessCPUPluginName = "cpu"

// MultiProcessCPUPlugin returns the path of the pinned CPU plugin that can be one process of a
// multi-process job (MultiProcessCPUPluginName: it accepts the "process_id" create option and
// numbers its devices per process), where `xlamesh install-plugin -plugin cpu` puts it.
// The error matches ErrPluginNotFound and gives that command.
func MultiProcessCPUPlugin() (string, error) {
	p, err := plugins.Lookup(MultiProcessCPUPluginName)
	if err != nil {
		return "", err
	}
	dir, err := plugins.Dir()
	if err != nil {
		return "", fmt.Errorf("pjrt: multi-process CPU plugin: %w: %v", ErrPluginNotFound, err)
	}
	path := p.Path(dir)
	if !fileExists(path) {
		return "", fmt.Errorf("pjrt: multi-process CPU plugin: %w (looked for %s); install it with "+
			"`go run github.com/xlamesh/xlamesh/cmd/xlamesh@latest install-plugin -plugin %s`, or set %s",
			ErrPluginNotFound, path, MultiProcessCPUPluginName, EnvPlugin)
	}
	return path, nil
}

// distState is what Open does for WithDistributed: validates the job, picks the plugin's
// multi-process create options, and forms the global device list afterwards.
type distState struct {
	d            kv.Distributed
	id, n        int
	useNodeNames bool // send node_id/num_nodes (true) or process_id (false)
}

// newDistState validates d; nil d gives a nil state, whose methods do nothing.
func newDistState(d kv.Distributed) (*distState, error) {
	if d == nil {
		return nil, nil
	}
	id, n := d.ProcessID(), d.NumProcesses()
	if n < 1 || id < 0 || id >= n {
		return nil, fmt.Errorf("pjrt: open: %w: process id %d of %d processes (need 0 ≤ id < processes)", ErrDistributed, id, n)
	}
	return &distState{d: d, id: id, n: n, useNodeNames: true}, nil
}

// addOptions adds the multi-process create options to options.
func (s *distState) addOptions(options map[string]any) {
	if s == nil {
		return
	}
	if s.useNodeNames {
		options["node_id"], options["num_nodes"] = int64(s.id), int64(s.n)
	} else {
		options["process_id"] = int64(s.id)
	}
}

// retry reports whether a failed create should be tried again with the other option names:
// the plugin refused "node_id" or "num_nodes" by name.
func (s *distState) retry(err error) bool {
	var perr *Error
	if s == nil || !s.useNodeNames || !errors.As(err, &perr) || perr.Code != InvalidArgument {
		return false
	}
	if strings.Contains(perr.Msg, "node_id") || strings.Contains(perr.Msg, "num_nodes") {
		s.useNodeNames = false
		return true
	}
	return false
}

// platformPrefix guesses the platform from the plugin's file name for the key prefix of the
// plugin's store ("cuda:", "tpu:", ...), which must be known before the client exists.
func platformPrefix(path string) string {
	base := strings.ToLower(filepath.Base(path))
	for _, p := range []string{"cuda", "rocm", "tpu", "cpu"} {
		if strings.Contains(base, p) {
			return p + ":"
		}
	}
	return "pjrt:"
}

// prefixStore is a kv.Store whose keys all start with prefix.
type prefixStore struct {
	prefix string
	store  kv.Store
}

// Get, TryGet and Put call the store with the prefixed key.
func (s prefixStore) Get(key string, timeout time.Duration) ([]byte, error) {
	return s.store.Get(s.prefix+key, timeout)
}
func (s prefixStore) TryGet(key string) ([]byte, error)  { return s.store.TryGet(s.prefix + key) }
func (s prefixStore) Put(key string, value []byte) error { return s.store.Put(s.prefix+key, value) }

// processDevices is what one process publishes about its client and devices.
type processDevices struct {
	Process      int            `json:"process"`       // the job's process id
	ProcessIndex int            `json:"process_index"` // what the plugin's client reported
	Platform     string         `json:"platform"`
	Plugin       string         `json:"plugin"`
	Devices      []remoteDevice `json:"devices"`
}

type remoteDevice struct {
	ID              int             `json:"id"`
	ProcessIndex    int             `json:"process_index"`
	LocalHardwareID int             `json:"local_hardware_id"`
	Kind            string          `json:"kind"`
	Text            string          `json:"text"`
	Attributes      map[string]attr `json:"attributes,omitempty"`
}

// attr is one device attribute in JSON, keeping its PJRT type.
type attr struct {
	S *string  `json:"s,omitempty"`
	I *int64   `json:"i,omitempty"`
	L []int64  `json:"l,omitempty"`
	F *float32 `json:"f,omitempty"`
	B *bool    `json:"b,omitempty"`
}

func toAttr(v any) (attr, bool) {
	switch x := v.(type) {
	case string:
		return attr{S: &x}, true
	case int64:
		return attr{I: &x}, true
	case []int64:
		return attr{L: append([]int64{}, x...)}, true
	case float32:
		return attr{F: &x}, true
	case bool:
		return attr{B: &x}, true
	}
	return attr{}, false
}

func (a attr) value() any {
	switch {
	case a.S != nil:
		return *a.S
	case a.I != nil:
		return *a.I
	case a.F != nil:
		return *a.F
	case a.B != nil:
		return *a.B
	}
	if a.L == nil {
		return []int64{}
	}
	return a.L
}

// devicesKey is where process p publishes its devices, below the store's own prefix.
func devicesKey(platform string, p int) string {
	return fmt.Sprintf("xlamesh:devices/%s/%d", platform, p)
}

// formGlobal makes c a client of the whole job. A client that already lists other processes'
// devices (the plugin formed it through the store) is checked; a process-local client gets the
// other processes' devices through the store.
func (s *distState) formGlobal(c *Client) error {
	if s == nil || s.n == 1 {
		return nil
	}
	if len(c.devices) > len(c.addressable) {
		if c.processIndex != s.id {
			return fmt.Errorf("pjrt: open: %w: process %d's client from %s reports process index %d", ErrDistributed, s.id, c.plugin.Path(), c.processIndex)
		}
		return nil
	}
	mine := processDevices{Process: s.id, ProcessIndex: c.processIndex, Platform: c.platform, Plugin: filepath.Base(c.plugin.Path())}
	for _, d := range c.devices {
		rd := remoteDevice{ID: d.info.id, ProcessIndex: d.info.processIndex, LocalHardwareID: d.info.localHardwareID,
			Kind: d.info.kind, Text: d.info.text, Attributes: map[string]attr{}}
		for k, v := range d.info.attributes {
			if a, ok := toAttr(v); ok {
				rd.Attributes[k] = a
			}
		}
		mine.Devices = append(mine.Devices, rd)
	}
	data, err := json.Marshal(mine)
	if err != nil {
		return fmt.Errorf("pjrt: open: %w: %v", ErrDistributed, err)
	}
	if err := s.d.Put(devicesKey(c.platform, s.id), data); err != nil {
		return fmt.Errorf("pjrt: open: process %d: publishing its devices: %w", s.id, err)
	}
	all := make([]processDevices, s.n)
	deadline := time.Now().Add(s.d.InitTimeout())
	for p := range s.n {
		if p == s.id {
			all[p] = mine
			continue
		}
		raw, err := s.d.Get(devicesKey(c.platform, p), max(time.Until(deadline), time.Millisecond))
		if err != nil {
			return fmt.Errorf("pjrt: open: process %d: waiting for the devices of process %d: %w", s.id, p, err)
		}
		if err := json.Unmarshal(raw, &all[p]); err != nil {
			return fmt.Errorf("pjrt: open: %w: process %d published unreadable devices: %v", ErrDistributed, p, err)
		}
	}
	if err := checkJob(all); err != nil {
		return err
	}
	devices := slices.Clone(c.devices)
	byID := map[int]*Device{}
	for _, d := range c.devices {
		byID[d.info.id] = d
	}
	var global []*Device
	for p, pd := range all {
		if p == s.id {
			global = append(global, devices...)
			continue
		}
		for _, rd := range pd.Devices {
			d := &Device{client: c, info: deviceInfo{id: rd.ID, processIndex: rd.ProcessIndex, localHardwareID: rd.LocalHardwareID,
				kind: rd.Kind, text: rd.Text, attributes: map[string]any{}}}
			for k, a := range rd.Attributes {
				d.info.attributes[k] = a.value()
			}
			global = append(global, d)
			byID[rd.ID] = d
		}
	}
	c.devices, c.byID = global, byID
	return nil
}

// checkJob checks what the processes published: each client reports its own process index, all
// run the same platform, and no device id appears twice.
func checkJob(all []processDevices) error {
	for p, pd := range all {
		if pd.ProcessIndex != p {
			return fmt.Errorf("pjrt: open: %w: the plugin %s ignores the process id: the client of process %d "+
				"reports process index %d (xla-cpu-pjrt 0.0.1 does; use a plugin that accepts node_id or process_id, "+
				"e.g. lammps-jax-pjrt-cpu, see pjrt.MultiProcessCPUPlugin)", ErrDistributed, pd.Plugin, p, pd.ProcessIndex)
		}
		if pd.Platform != all[0].Platform {
			return fmt.Errorf("pjrt: open: %w: process %d runs platform %q, process 0 %q", ErrDistributed, p, pd.Platform, all[0].Platform)
		}
	}
	owner := map[int]int{}
	for p, pd := range all {
		for _, d := range pd.Devices {
			if q, dup := owner[d.ID]; dup {
				return fmt.Errorf("pjrt: open: %w: device id %d is reported by process %d and process %d", ErrDistributed, d.ID, q, p)
			}
			owner[d.ID] = p
		}
	}
	return nil
}
