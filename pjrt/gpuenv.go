package pjrt

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The environment variables with which JAX users size the GPU plugin's memory (JAX reads them
// when it creates a CUDA or ROCm client and passes them as create options). Open reads them the
// same way for a plugin that is not a CPU plugin; a create option given with WithCreateOption
// wins over the variable. The CPU plugins never see them.
const (
	// EnvGPUPreallocate: "false", "False" or "0" makes the GPU plugin allocate device memory as
	// it is needed instead of taking most of the GPU when the client is created (create option
	// "preallocate"). Any other non-empty value asks for preallocation.
	EnvGPUPreallocate = "XLA_PYTHON_CLIENT_PREALLOCATE"
	// EnvGPUMemFraction: the fraction of the GPU's memory the plugin's allocator may use, a
	// number in (0, 1] (create option "memory_fraction").
	EnvGPUMemFraction = "XLA_CLIENT_MEM_FRACTION"
	// EnvGPUMemFractionOld is EnvGPUMemFraction's older name, still read; setting both is an error.
	EnvGPUMemFractionOld = "XLA_PYTHON_CLIENT_MEM_FRACTION"
	// EnvGPUAllocator: the plugin's allocator, one of default, platform, bfc, cuda_async, vmm,
	// address (create option "allocator").
	EnvGPUAllocator = "XLA_PYTHON_CLIENT_ALLOCATOR"
	// EnvGPUCollectiveMemMB: the memory set aside for collectives, in MiB (create option
	// "collective_memory_size", in bytes).
	EnvGPUCollectiveMemMB = "XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB"
)

// gpuAllocators are the allocator names the GPU plugins take.
var gpuAllocators = []string{"default", "platform", "bfc", "cuda_async", "vmm", "address"}

// gpuEnvOptions returns the create options the GPU memory variables above ask for, read with
// getenv; only the variables that are set give an option. A value that JAX would refuse is an
// error wrapping ErrCreateOption that names the variable.
func gpuEnvOptions(getenv func(string) string) (map[string]any, error) {
	opts := map[string]any{}
	bad := func(name, v, want string) error {
		return fmt.Errorf("pjrt: open: %w: %s=%q: want %s", ErrCreateOption, name, v, want)
	}
	if v := getenv(EnvGPUPreallocate); v != "" {
		opts["preallocate"] = v != "false" && v != "False" && v != "0"
	}
	frac, fracName := getenv(EnvGPUMemFraction), EnvGPUMemFraction
	if old := getenv(EnvGPUMemFractionOld); old != "" {
		if frac != "" {
			return nil, fmt.Errorf("pjrt: open: %w: %s and %s are both set; unset %s, the older name",
				ErrCreateOption, EnvGPUMemFraction, EnvGPUMemFractionOld, EnvGPUMemFractionOld)
		}
		frac, fracName = old, EnvGPUMemFractionOld
	}
	if frac != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(frac), 32)
		if err != nil || !(f > 0 && f <= 1) {
			return nil, bad(fracName, frac, "a fraction in (0, 1]")
		}
		opts["memory_fraction"] = float32(f)
	}
	if v := getenv(EnvGPUAllocator); v != "" {
		a := strings.ToLower(v)
		if !slices.Contains(gpuAllocators, a) {
			return nil, bad(EnvGPUAllocator, v, "one of "+strings.Join(gpuAllocators, ", "))
		}
		opts["allocator"] = a
	}
	if v := getenv(EnvGPUCollectiveMemMB); v != "" {
		mb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || mb < 0 || mb > 1<<30 {
			return nil, bad(EnvGPUCollectiveMemMB, v, "a size in MiB, at least 0")
		}
		opts["collective_memory_size"] = mb << 20
	}
	return opts, nil
}

// withGPUEnv returns options with the GPU memory variables' options added where options does
// not name them already.
func withGPUEnv(options map[string]any) (map[string]any, error) {
	env, err := gpuEnvOptions(os.Getenv)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(options)+len(env))
	for k, v := range env {
		out[k] = v
	}
	for k, v := range options {
		out[k] = v
	}
	return out, nil
}
