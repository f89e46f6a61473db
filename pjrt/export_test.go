package pjrt

// KVBridgeExchange exposes kvBridgeExchange to the external test package.
var KVBridgeExchange = kvBridgeExchange

// KVBridgeConcurrent exposes kvBridgeConcurrent to the external test package.
var KVBridgeConcurrent = kvBridgeConcurrent

// SetHostMemory turns a client's host-memory routes (staging transfers, direct reads of device
// memory) on or off, so that tests reach the generic routes on the CPU plugin too.
func SetHostMemory(c *Client, on bool) { c.hostMemory = on }

// DirectReads returns how many buffers CopyToHostAll has read straight from device memory.
func DirectReads() int64 { return directReads.Load() }

// InFlight returns the number of executions c has in flight.
func InFlight(c *Client) int { return c.inFlight() }

// FloorLoop exposes Executable.floorLoop (the binding's floor) to the benchmarks.
func FloorLoop(e *Executable, args [][]*Buffer, n int, raw, chain bool) error {
	return e.floorLoop(args, n, raw, chain)
}

// CacheEntryPath returns the file the compile cache of c keeps the program under, as Compile
// would compile it with opts ("" without a cache).
func CacheEntryPath(c *Client, mlir string, opts CompileOptions) (string, error) {
	if c.cache == nil {
		return "", nil
	}
	n := opts.NumPartitions
	if n == 0 {
		n = max(1, len(opts.DeviceAssignment))
	}
	devices, err := c.assign(n, opts.DeviceAssignment, false)
	if err != nil {
		return "", err
	}
	options := compileOptionsProto(deviceIDs(devices), opts.Partitioner, c.api.minor, opts.CompilerOptions)
	return c.cache.path(c.cache.key(c, mlir, options, devices)), nil
}

// CacheEntryHeaderLen is the length of a compile cache entry's header.
const CacheEntryHeaderLen = entryHeaderLen
