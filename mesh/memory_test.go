package mesh

import (
	"errors"
	"testing"
)

// memDev is a device that lists its memory kinds.
type memDev struct {
	Device
	kinds []string
}

func (d memDev) MemoryKinds() []string { return d.kinds }

func TestMemoryKind(t *testing.T) {
	m := MustNew(SimDevices(8), []int{4, 2}, "x", "y")
	s := MustNamedSharding(m, P("x", "y"))
	if got := s.MemoryKind(); got != MemoryDevice {
		t.Errorf("MemoryKind of a concrete sharding = %q, want %q", got, MemoryDevice)
	}
	dev, err := s.WithMemoryKind(MemoryDevice)
	if err != nil || !dev.Equal(s) || dev.Key() != s.Key() || dev.String() != s.String() {
		t.Errorf("WithMemoryKind(device) = %v, %v; want a sharding equal to %v", dev, err, s)
	}
	host, err := s.WithMemoryKind(MemoryPinnedHost)
	if err != nil {
		t.Fatal(err)
	}
	const want = "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y'), memory_kind=pinned_host)"
	if host.String() != want || host.MemoryKind() != MemoryPinnedHost {
		t.Errorf("pinned_host sharding = %s (%q), want %s", host, host.MemoryKind(), want)
	}
	if host.Equal(s) || host.Key() == s.Key() {
		t.Errorf("pinned_host and device shardings compare equal")
	}
	unpinned, _ := s.WithMemoryKind(MemoryUnpinnedHost)
	if unpinned.Equal(host) {
		t.Errorf("pinned_host and unpinned_host shardings compare equal")
	}
	// The spec and mesh are unchanged; back to device gives the sharding made without a kind.
	if !host.Spec().Equal(s.Spec()) || host.NumShards() != 8 {
		t.Errorf("pinned_host sharding lost its spec: %v", host)
	}
	back, err := host.WithMemoryKind(MemoryDevice)
	if err != nil || !back.Equal(s) || back.Key() != s.Key() {
		t.Errorf("pinned_host then device = %v, %v; want %v", back, err, s)
	}
	again, _ := host.WithMemoryKind(MemoryPinnedHost)
	if !again.Equal(host) {
		t.Errorf("WithMemoryKind(pinned_host) twice = %v, want %v", again, host)
	}
}

func TestMemoryKindAbstract(t *testing.T) {
	a, err := NewAbstract([]int{4, 2}, []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewAbstractSharding(a, P("x"))
	if err != nil {
		t.Fatal(err)
	}
	// JAX: an abstract sharding made without a kind has none, and prints none; "device" differs.
	if s.MemoryKind() != "" || s.String() != "NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x',))" {
		t.Errorf("abstract sharding = %s (memory kind %q)", s, s.MemoryKind())
	}
	dev, err := s.WithMemoryKind(MemoryDevice)
	if err != nil || dev.Equal(s) || dev.String() != "NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x',), memory_kind=device)" {
		t.Errorf("abstract WithMemoryKind(device) = %v, %v", dev, err)
	}
	_, err = s.WithMemoryKind("foo")
	var me *MemoryKindError
	if !errors.As(err, &me) || !errors.Is(err, ErrMemoryKind) ||
		err.Error() != "mesh: Got invalid memory kind: foo. Valid memory kinds are: device, pinned_host, unpinned_host" {
		t.Errorf("abstract WithMemoryKind(foo) error = %v", err)
	}
}

func TestMemoryKindRefused(t *testing.T) {
	s := MustNamedSharding(MustNew(SimDevices(8), []int{8}, "x"), P("x"))
	for _, kind := range []string{"foo", "", "Device", "pinned_host "} {
		_, err := s.WithMemoryKind(kind)
		var me *MemoryKindError
		want := "mesh: Could not find memory addressable by device cpu. Device cpu can address the following memory kinds: device, pinned_host, unpinned_host. Got memory kind: " + kind
		if !errors.As(err, &me) || !errors.Is(err, ErrMemoryKind) || err.Error() != want || me.Kind != kind {
			t.Errorf("WithMemoryKind(%q) error = %v, want %q", kind, err, want)
		}
	}
	if _, err := (NamedSharding{}).WithMemoryKind(MemoryDevice); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("zero sharding: WithMemoryKind error = %v, want ErrInvalidMesh", err)
	}
}

// TestMemoryKindFromDevices: a device that lists its memories decides which kinds are valid and
// which is the default.
func TestMemoryKindFromDevices(t *testing.T) {
	devs := SimDevices(2)
	for i := range devs {
		devs[i] = memDev{Device: devs[i], kinds: []string{"hbm", MemoryPinnedHost}}
	}
	s := MustNamedSharding(MustNew(devs, []int{2}, "x"), P("x"))
	if s.MemoryKind() != "hbm" {
		t.Errorf("MemoryKind = %q, want the devices' default %q", s.MemoryKind(), "hbm")
	}
	if _, err := s.WithMemoryKind(MemoryUnpinnedHost); err == nil ||
		err.Error() != "mesh: Could not find memory addressable by device cpu. Device cpu can address the following memory kinds: hbm, pinned_host. Got memory kind: unpinned_host" {
		t.Errorf("WithMemoryKind(unpinned_host) error = %v", err)
	}
	h, err := s.WithMemoryKind(MemoryPinnedHost)
	if err != nil || h.MemoryKind() != MemoryPinnedHost {
		t.Errorf("WithMemoryKind(pinned_host) = %v, %v", h, err)
	}
	if d, _ := h.WithMemoryKind("hbm"); !d.Equal(s) {
		t.Errorf("back to the default kind: %v, want %v", d, s)
	}
}
