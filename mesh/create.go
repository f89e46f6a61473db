package mesh

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// CreateOption changes how Create and CreateHybrid arrange devices.
type CreateOption func(*createConfig)

type createConfig struct {
	allowSplit       bool
	contiguous       bool
	processIsGranule bool
	givenGPUOrder    bool
}

// AllowSplitPhysicalAxes lets Create split a physical TPU axis over several
// logical axes when no assignment of whole physical axes exists (JAX's
// allow_split_physical_axes).
func AllowSplitPhysicalAxes() CreateOption { return func(c *createConfig) { c.allowSplit = true } }

// ContiguousSubmeshes makes Create arrange TPU devices so that each process's
// devices form a contiguous sub-mesh, for the topologies where JAX knows how
// (JAX's contiguous_submeshes); other topologies are an error wrapping
// ErrNoAssignment.
func ContiguousSubmeshes() CreateOption { return func(c *createConfig) { c.contiguous = true } }

// ProcessIsGranule makes CreateHybrid group devices by process instead of by
// slice (JAX's process_is_granule).
func ProcessIsGranule() CreateOption { return func(c *createConfig) { c.processIsGranule = true } }

// GPUsInGivenOrder makes Create (and CreateHybrid, per group) arrange GPU devices
// row-major in the order given, as create_device_mesh did up to JAX 0.10 (the
// oracle's former version, 0.8.1, among them). Without it GPU devices are sorted
// by id first, as JAX 0.11 and later do: the id is XLA's topology-aware global
// numbering, which a device list in process order need not follow.
func GPUsInGivenOrder() CreateOption { return func(c *createConfig) { c.givenGPUOrder = true } }

// Create builds a mesh of the given shape and axis names from devices the way
// JAX's mesh_utils.create_device_mesh orders them, for good collective
// performance. The shape is ordered by increasing network intensity (the
// last axis communicates most). Dispatch is on the last device:
//
//   - TPU v2/v3 trays, v4 lite, v5e/v5 lite/v6 lite and v5p take JAX's
//     documented ring orders for the small topologies it lists;
//   - other TPU devices (CoordsDevice) are placed by physical coordinates,
//     and logical axes, last first, take the first subset of whole physical
//     axes whose sizes multiply to theirs (AllowSplitPhysicalAxes enables
//     JAX's search that splits physical axes);
//   - GPU devices ("cuda", "rocm", "gpu") are sorted by id, as JAX 0.11 and
//     later do (GPUsInGivenOrder keeps the given order, as JAX 0.8.1 did);
//   - CPU and other devices keep the given order.
//
// Errors wrap ErrDeviceCount when len(devices) is not the product of shape,
// ErrNoAssignment when TPU devices cannot be placed, and New's errors.
func Create(devices []Device, shape []int, names []string, opts ...CreateOption) (Mesh, error) {
	var cfg createConfig
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := NewAbstract(shape, names)
	if err != nil {
		return Mesh{}, err
	}
	if abs.Empty() {
		return New(devices, nil)
	}
	ordered, err := deviceOrder(devices, shape, cfg)
	if err != nil {
		return Mesh{}, err
	}
	return withDevices(abs, ordered)
}

// CreateHybrid builds a mesh for hybrid parallelism (JAX's
// create_hybrid_device_mesh): devices are grouped by slice (SliceDevice) or,
// with ProcessIsGranule, by process, groups sorted by key; each group is
// arranged by Create into shape, and the groups are laid out in dcnShape with
// the DCN axes major: the mesh has size shape[d]*dcnShape[d] along axis d,
// and device i of group g sits at g[d]*shape[d]+i[d]. Errors wrap
// ErrDeviceCount when the number of groups is not the product of dcnShape,
// ErrInvalidMesh for mismatched ranks or devices without slice indices, and
// Create's errors.
func CreateHybrid(devices []Device, shape, dcnShape []int, names []string, opts ...CreateOption) (Mesh, error) {
	var cfg createConfig
	for _, o := range opts {
		o(&cfg)
	}
	if len(shape) != len(dcnShape) {
		return Mesh{}, fmt.Errorf("mesh: %w: mesh shape %s and dcn mesh shape %s have different ranks",
			ErrInvalidMesh, pyIntTuple(shape), pyIntTuple(dcnShape))
	}
	if _, err := NewAbstract(shape, names); err != nil {
		return Mesh{}, err
	}
	if _, err := NewAbstract(dcnShape, names); err != nil {
		return Mesh{}, err
	}
	total := make([]int, len(shape))
	for d := range shape {
		total[d] = shape[d] * dcnShape[d] // each factor is at most MaxSize: no overflow
	}
	abs, err := NewAbstract(total, names)
	if err != nil {
		return Mesh{}, err
	}
	groups := map[int][]Device{}
	for _, d := range devices {
		if d == nil {
			return Mesh{}, fmt.Errorf("mesh: %w: nil device", ErrInvalidMesh)
		}
		key := d.ProcessIndex()
		if !cfg.processIsGranule {
			sd, ok := d.(SliceDevice)
			if !ok {
				return Mesh{}, fmt.Errorf("mesh: %w: device %d does not have a slice index; see ProcessIsGranule", ErrInvalidMesh, d.ID())
			}
			key = sd.SliceIndex()
		}
		groups[key] = append(groups[key], d)
	}
	keys := make([]int, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dcn, _ := NewAbstract(dcnShape, names)
	if len(keys) != dcn.Size() {
		what := "slices"
		if cfg.processIsGranule {
			what = "processes"
		}
		return Mesh{}, fmt.Errorf("mesh: %w: number of %s %d must equal the product of dcn mesh shape %s",
			ErrDeviceCount, what, len(keys), pyIntTuple(dcnShape))
	}
	inner, _ := NewAbstract(shape, names)
	out := make([]Device, abs.Size())
	pos := make([]int, len(shape))
	for g, k := range keys {
		ordered, err := deviceOrder(groups[k], shape, cfg)
		if err != nil {
			return Mesh{}, err
		}
		gc := dcn.coords(g)
		for i, d := range ordered {
			ic := inner.coords(i)
			for a := range pos {
				pos[a] = gc[a]*shape[a] + ic[a]
			}
			out[abs.position(pos)] = d
		}
	}
	return withDevices(abs, out)
}

// deviceOrder returns devices in the row-major order of a mesh of shape.
func deviceOrder(devices []Device, shape []int, cfg createConfig) ([]Device, error) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	if n != len(devices) {
		return nil, fmt.Errorf("mesh: %w: number of devices %d must equal the product of mesh shape %s",
			ErrDeviceCount, len(devices), pyIntTuple(shape))
	}
	if n == 0 {
		return nil, nil
	}
	for i, d := range devices {
		if d == nil {
			return nil, fmt.Errorf("mesh: %w: device at position %d is nil", ErrInvalidMesh, i)
		}
	}
	last := devices[len(devices)-1]
	if out := kindOrder(last.Kind(), devices, shape); out != nil {
		return out, nil
	}
	switch last.Platform() {
	case "tpu":
		return tpuOrder(devices, shape, cfg)
	case "cuda", "rocm", "gpu":
		out := slices.Clone(devices)
		if !cfg.givenGPUOrder {
			slices.SortStableFunc(out, func(a, b Device) int { return cmp.Compare(a.ID(), b.ID()) })
		}
		return out, nil
	}
	return slices.Clone(devices), nil
}

// Ring orders of devices within a tray, from JAX's mesh_utils.
var (
	trayRingOrder     = []int{0, 1, 2, 3, 6, 7, 4, 5}
	tray2x2RingOrder  = []int{0, 1, 3, 2}
	tray4x4RingOrder  = []int{0, 1, 2, 3, 7, 6, 5, 9, 10, 11, 15, 14, 13, 12, 8, 4}
	v5eTrayRingOrder  = []int{0, 1, 2, 3, 7, 6, 5, 4}
	v5eTrayIotaOrder  = []int{0, 4, 2, 6, 1, 5, 3, 7}
	v5p2x2x2RingOrder = []int{0, 1, 3, 2, 6, 7, 5, 4}
)

// permute returns devices[order[i]] for each i.
func permute(devices []Device, order []int) []Device {
	out := make([]Device, len(order))
	for i, o := range order {
		out[i] = devices[o]
	}
	return out
}

// kindOrder applies the device-kind specific ring orders; nil means "use the
// generic logic".
func kindOrder(kind string, devices []Device, shape []int) []Device {
	switch kind {
	case "TPU v2", "TPU v3":
		switch {
		case len(devices) == 8:
			return permute(devices, trayRingOrder)
		case shape[len(shape)-1] == 8:
			out := make([]Device, 0, len(devices))
			for row := 0; row < len(devices); row += 8 {
				out = append(out, permute(devices[row:row+8], trayRingOrder)...)
			}
			return out
		}
		return slices.Clone(devices)
	case "TPU v4 lite":
		if len(devices) == 4 {
			return permute(devices, tray2x2RingOrder)
		}
	case "TPU v5 lite", "TPU v5e", "TPU v6 lite":
		bx, by, bz, seq := sequential(devices)
		switch {
		case bx == 2 && by == 2 && bz == 1 && len(devices) == 4:
			return permute(seq, tray2x2RingOrder)
		case len(devices) == 8 && bx == 2 && by == 2 && bz == 2:
			return permute(seq, v5eTrayIotaOrder)
		case len(devices) == 8:
			return permute(seq, v5eTrayRingOrder)
		case bx == 4 && by == 4 && bz == 1 && len(devices) == 16 && slices.Max(shape) == 16:
			return permute(seq, tray4x4RingOrder)
		}
	case "TPU v5p":
		bx, by, bz, seq := sequential(devices)
		if bx == 2 && by == 2 && bz == 2 && len(devices) == 8 {
			return permute(seq, v5p2x2x2RingOrder)
		}
	}
	return nil
}

// sequential returns the bounds (lexicographically largest coords + 1) and
// the devices sorted by reversed coordinates (x minor), as JAX's v5e/v5p
// handlers do. Devices without coordinates count as (0, 0, 0).
func sequential(devices []Device) (bx, by, bz int, seq []Device) {
	coords := func(d Device) []int {
		if cd, ok := d.(CoordsDevice); ok {
			if c := cd.Coords(); len(c) == 3 {
				return c
			}
		}
		return []int{0, 0, 0}
	}
	mx := []int{0, 0, 0}
	for _, d := range devices {
		if c := coords(d); slices.Compare(c, mx) > 0 {
			mx = c
		}
	}
	seq = slices.Clone(devices)
	slices.SortStableFunc(seq, func(a, b Device) int {
		ca, cb := coords(a), coords(b)
		return slices.Compare([]int{ca[2], ca[1], ca[0]}, []int{cb[2], cb[1], cb[0]})
	})
	return mx[0] + 1, mx[1] + 1, mx[2] + 1, seq
}

// physicalMesh is devices laid out by physical coordinates (row-major).
type physicalMesh struct {
	shape   []int
	devices []Device
}

// physicalTPUMesh places TPU devices at coords - min (JAX's
// _get_physical_tpu_mesh): v2/v3 use (x, y, core), TPU7x and v5p with two
// cores per chip (x, y, z, core), others (x, y, z) with one device per chip.
func physicalTPUMesh(devices []Device) (physicalMesh, error) {
	cds := make([]CoordsDevice, len(devices))
	for i, d := range devices {
		cd, ok := d.(CoordsDevice)
		if !ok || len(cd.Coords()) != 3 {
			return physicalMesh{}, fmt.Errorf("mesh: %w: TPU device %d has no (x, y, z) coordinates", ErrNoAssignment, d.ID())
		}
		cds[i] = cd
	}
	lo, hi := slices.Clone(cds[0].Coords()), slices.Clone(cds[0].Coords())
	loC, hiC := cds[0].CoreOnChip(), cds[0].CoreOnChip()
	for _, d := range cds {
		for i, c := range d.Coords() {
			lo[i], hi[i] = min(lo[i], c), max(hi[i], c)
		}
		loC, hiC = min(loC, d.CoreOnChip()), max(hiC, d.CoreOnChip())
	}
	dims := []int{hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1}
	cores := hiC - loC + 1
	kind := devices[0].Kind()
	var shape []int
	var place func(d CoordsDevice) ([]int, error)
	onePerChip := func(d CoordsDevice) ([]int, error) {
		if d.CoreOnChip() != 0 {
			return nil, fmt.Errorf("mesh: %w: creating meshes for TPU >v3 requires one device per chip (\"megacore\" mode), got core %d for device %d of kind %s",
				ErrNoAssignment, d.CoreOnChip(), d.ID(), kind)
		}
		c := d.Coords()
		return []int{c[0] - lo[0], c[1] - lo[1], c[2] - lo[2]}, nil
	}
	switch kind {
	case "TPU v2", "TPU v3":
		shape = []int{dims[0], dims[1], cores}
		place = func(d CoordsDevice) ([]int, error) {
			c := d.Coords()
			if c[2] != 0 {
				return nil, fmt.Errorf("mesh: %w: %s device %d has z coordinate %d, want 0", ErrNoAssignment, kind, d.ID(), c[2])
			}
			return []int{c[0] - lo[0], c[1] - lo[1], d.CoreOnChip() - loC}, nil
		}
	case "TPU7x", "TPU7", "TPU v5p":
		if kind == "TPU v5p" && cores != 2 {
			shape = dims
			place = onePerChip
			break
		}
		shape = []int{dims[0], dims[1], dims[2], cores}
		place = func(d CoordsDevice) ([]int, error) {
			c := d.Coords()
			return []int{c[0] - lo[0], c[1] - lo[1], c[2] - lo[2], d.CoreOnChip() - loC}, nil
		}
	default:
		shape = dims
		place = onePerChip
	}
	pm := physicalMesh{shape: shape}
	want := 1
	for _, d := range append(slices.Clone(dims), cores) {
		// Coordinates far apart (or overflowing hi-lo+1) cannot be a cuboid of these devices.
		if d < 1 || d > len(devices) || want > len(devices)/d {
			want = -1
			break
		}
		want *= d
	}
	if want != len(devices) {
		return physicalMesh{}, fmt.Errorf("mesh: %w: %d devices do not fill the physical cuboid %s with %d cores per chip; coordinates are not a contiguous cuboid",
			ErrNoAssignment, len(devices), pyIntTuple(dims), cores)
	}
	n := 1
	for _, s := range shape {
		n *= s
	}
	pm.devices = make([]Device, n)
	for _, d := range cds {
		c, err := place(d)
		if err != nil {
			return physicalMesh{}, err
		}
		p := 0
		for i, s := range shape {
			p = p*s + c[i]
		}
		pm.devices[p] = d
	}
	if slices.Contains(pm.devices, nil) {
		return physicalMesh{}, fmt.Errorf("mesh: %w: constructed mesh contains a hole; coordinates of the devices are not a contiguous cuboid %s",
			ErrNoAssignment, pyIntTuple(shape))
	}
	return pm, nil
}

// transposeTrick is one entry of JAX's _TRANSPOSE_TRICKS: for a mesh shape
// (without size-1 dims) on a physical topology, the physical transpose that
// makes per-process sub-meshes contiguous.
type transposeTrick struct {
	shape string
	perm  []int
}

// transposeTricks maps a physical topology to its tricks, in JAX's order.
var transposeTricks = map[string][]transposeTrick{
	"(2, 2, 1)":   {{"(2, 2)", []int{0, 1, 2}}},
	"(2, 2, 4)":   {{"(4, 4)", []int{0, 1, 2}}},
	"(4, 4, 4)":   {{"(16, 4)", []int{0, 2, 1}}},
	"(4, 8, 8)":   {{"(64, 4)", []int{0, 2, 1}}, {"(4, 64)", []int{0, 2, 1}}},
	"(8, 8, 8)":   {{"(64, 8)", []int{0, 2, 1}}},
	"(8, 16, 16)": {{"(256, 8)", []int{0, 2, 1}}, {"(8, 256)", []int{0, 2, 1}}},
}

// transpose returns the physical mesh with its axes permuted.
func (pm physicalMesh) transpose(perm []int) physicalMesh {
	src := MustAbstract(pm.shape, axisPlaceholders(len(pm.shape)))
	shape := make([]int, len(perm))
	for i, p := range perm {
		shape[i] = pm.shape[p]
	}
	dst := MustAbstract(shape, axisPlaceholders(len(shape)))
	out := physicalMesh{shape: shape, devices: make([]Device, len(pm.devices))}
	c := make([]int, len(perm))
	for q := range out.devices {
		dc := dst.coords(q)
		for i, p := range perm {
			c[p] = dc[i]
		}
		out.devices[q] = pm.devices[src.position(c)]
	}
	return out
}

func axisPlaceholders(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("a", i)
	}
	return out
}

func tpuOrder(devices []Device, shape []int, cfg createConfig) ([]Device, error) {
	pm, err := physicalTPUMesh(devices)
	if err != nil {
		return nil, err
	}
	if cfg.contiguous {
		topo := pyIntTuple(pm.shape)
		tricks, ok := transposeTricks[topo]
		if !ok {
			return nil, fmt.Errorf("mesh: %w: create_device_mesh cannot create contiguous submeshes for physical mesh topology %s", ErrNoAssignment, topo)
		}
		var nontrivial []int
		for _, s := range shape {
			if s != 1 {
				nontrivial = append(nontrivial, s)
			}
		}
		i := slices.IndexFunc(tricks, func(tr transposeTrick) bool { return tr.shape == pyIntTuple(nontrivial) })
		if i < 0 {
			var avail []string
			for _, tr := range tricks {
				avail = append(avail, tr.shape)
			}
			return nil, fmt.Errorf("mesh: %w: create_device_mesh cannot create contiguous submeshes for mesh shape %s and physical mesh topology %s; available mesh shapes: [%s]",
				ErrNoAssignment, pyIntTuple(shape), topo, strings.Join(avail, ", "))
		}
		pm = pm.transpose(tricks[i].perm)
	}
	assign, err := assignAxes(pm.shape, shape, cfg.allowSplit)
	if err != nil {
		return nil, err
	}
	return pm.logical(shape, assign), nil
}

// assignAxes returns the assignment matrix [physical][logical] -> size of the
// logical axes to physical axes (JAX's _create_device_mesh_for_nd_torus):
// logical axes, last first, take the first subset of unassigned whole
// physical axes (most axes first, in combination order) whose sizes multiply
// to theirs.
func assignAxes(phys, logical []int, allowSplit bool) ([][]int, error) {
	assign := make([][]int, len(phys))
	for p := range assign {
		assign[p] = make([]int, len(logical))
		for l := range assign[p] {
			assign[p][l] = 1
		}
	}
	avail := slices.Clone(phys)
	for l := len(logical) - 1; l >= 0; l-- {
		size := logical[l]
		var found []int
		for k := len(phys); k >= 1 && found == nil; k-- {
			forCombinations(len(phys), k, func(c []int) bool {
				prod := 1
				for _, p := range c {
					prod *= avail[p]
				}
				if prod == size {
					found = slices.Clone(c)
					return false
				}
				return true
			})
		}
		if found == nil {
			if size == 1 {
				continue
			}
			if !allowSplit {
				return nil, fmt.Errorf("mesh: %w: failed to find assignment for logical_axis_index %d of size %d with remaining assignable mesh %s; the size of each axis in your logical mesh must be equal to the product of some subset of the physical mesh axis sizes, e.g. logical mesh (4, 16) is compatible with physical mesh 4x4x4 since 4=4 and 16=4x4 (use AllowSplitPhysicalAxes to split physical axes)",
					ErrNoAssignment, l, size, pyList(avail))
			}
			return splitAxes(phys, logical)
		}
		for _, p := range found {
			assign[p][l] = phys[p]
			avail[p] = 0
		}
	}
	return assign, nil
}

// forCombinations calls f with each k-subset of 0..n-1 in
// itertools.combinations order until f returns false.
func forCombinations(n, k int, f func([]int) bool) {
	c := make([]int, k)
	for i := range c {
		c[i] = i
	}
	for {
		if !f(c) {
			return
		}
		i := k - 1
		for i >= 0 && c[i] == n-k+i {
			i--
		}
		if i < 0 {
			return
		}
		c[i]++
		for j := i + 1; j < k; j++ {
			c[j] = c[j-1] + 1
		}
	}
}

// splitAxes assigns logical axes to physical axes allowing splits (JAX's
// _create_device_mesh_for_nd_torus_splitting_axes): for each logical axis,
// last first, every way of distributing its prime factors over physical axes
// with room for them is scored, preferring (1) the largest product of
// entries that fill a whole physical axis, (2) more whole physical axes,
// (3) the largest product of entries on already-used physical axes, and
// (4) the lexicographically largest assignment.
func splitAxes(phys, logical []int) ([][]int, error) {
	np, nl := len(phys), len(logical)
	assign := make([][]int, np)
	for p := range assign {
		assign[p] = make([]int, nl)
		for l := range assign[p] {
			assign[p][l] = 1
		}
	}
	used := func(p int) int {
		u := 1
		for _, v := range assign[p] {
			u *= v
		}
		return u
	}
	better := func(x, y []int) bool {
		whole := func(z []int) (prod, count int) {
			prod = 1
			for i, s := range z {
				if s == phys[i] {
					prod *= s
					if s > 1 {
						count++
					}
				}
			}
			return
		}
		xw, xc := whole(x)
		yw, yc := whole(y)
		if xw != yw {
			return xw > yw
		}
		if xc != yc {
			return xc > yc
		}
		overlap := func(z []int) int {
			prod := 1
			for i, s := range z {
				if used(i) > 1 {
					prod *= s
				}
			}
			return prod
		}
		if xo, yo := overlap(x), overlap(y); xo != yo {
			return xo > yo
		}
		return slices.Compare(x, y) > 0
	}
	for l := nl - 1; l >= 0; l-- {
		var best []int
		for _, z := range feasibleAssignments(phys, used, logical[l]) {
			if best == nil || better(z, best) {
				best = z
			}
		}
		if best == nil {
			return nil, fmt.Errorf("mesh: %w: cannot split physical mesh %s into logical mesh %s: no room for logical axis %d of size %d",
				ErrNoAssignment, pyIntTuple(phys), pyIntTuple(logical), l, logical[l])
		}
		for p := range np {
			assign[p][l] = best[p]
		}
	}
	return assign, nil
}

// feasibleAssignments lists the vectors z with prod(z) == size and
// phys[i] % (z[i] * used(i)) == 0, built from size's prime factors.
func feasibleAssignments(phys []int, used func(int) int, size int) [][]int {
	factors := primeFactors(size)
	var out [][]int
	z := make([]int, len(phys))
	for i := range z {
		z[i] = 1
	}
	lastAxis := make([]int, len(factors))
	var rec func(k int)
	rec = func(k int) {
		if k == len(factors) {
			out = append(out, slices.Clone(z))
			return
		}
		f := factors[k]
		// Equal factors go to non-decreasing axes so each multiset is built once.
		start := 0
		if k > 0 && factors[k-1] == f {
			start = lastAxis[k-1]
		}
		for i := start; i < len(phys); i++ {
			if (phys[i]/used(i))%(z[i]*f) != 0 {
				continue
			}
			z[i] *= f
			lastAxis[k] = i
			rec(k + 1)
			z[i] /= f
		}
	}
	rec(0)
	return out
}

// primeFactors returns the prime factors of x > 0 in ascending order.
func primeFactors(x int) []int {
	var out []int
	for p := 2; p*p <= x; p++ {
		for x%p == 0 {
			out = append(out, p)
			x /= p
		}
	}
	if x > 1 {
		out = append(out, x)
	}
	return out
}

// logical reads the physical mesh out in logical order (JAX's
// _generate_logical_mesh): each physical axis p is split into sub-axes of
// sizes assign[p][0..L-1] (logical 0 major), and logical axis l gathers its
// sub-axes in physical order (physical 0 major).
func (pm physicalMesh) logical(shape []int, assign [][]int) []Device {
	lab := MustAbstract(shape, axisPlaceholders(len(shape)))
	out := make([]Device, len(pm.devices))
	digits := make([][]int, len(pm.shape))
	for p := range digits {
		digits[p] = make([]int, len(shape))
	}
	pc := make([]int, len(pm.shape))
	for q := range out {
		lc := lab.coords(q)
		for l := range shape {
			c := lc[l]
			for p := len(pm.shape) - 1; p >= 0; p-- {
				digits[p][l] = c % assign[p][l]
				c /= assign[p][l]
			}
		}
		for p := range pm.shape {
			v := 0
			for l := range shape {
				v = v*assign[p][l] + digits[p][l]
			}
			pc[p] = v
		}
		pos := 0
		for p, s := range pm.shape {
			pos = pos*s + pc[p]
		}
		out[q] = pm.devices[pos]
	}
	return out
}

// pyList formats ints as a Python list: [4, 4, 4].
func pyList(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// MakeMesh is jax.make_mesh: it takes the first prod(shape) devices, orders
// them with Create's defaults (splitting physical axes only on v5e, as JAX
// does; GPU devices sorted by id, as JAX 0.11 and later) and
// sets the axis types (all Explicit when none are given, JAX's default since
// 0.9: values built on the mesh carry sharding types; see package lower). It returns an error wrapping ErrDeviceCount when there are fewer
// devices than prod(shape), ErrUnsupported for TPU devices from more than
// one slice (use CreateHybrid), and the errors of Create and WithAxisTypes.
func MakeMesh(devices []Device, shape []int, names []string, types ...AxisType) (Mesh, error) {
	abs, err := NewAbstract(shape, names, types...)
	if err != nil {
		return Mesh{}, err
	}
	n := abs.Size()
	if len(shape) == 0 {
		n = 0
	}
	if len(devices) < n {
		return Mesh{}, fmt.Errorf("mesh: %w: number of devices %d must be >= the product of mesh shape %s",
			ErrDeviceCount, len(devices), pyIntTuple(shape))
	}
	devices = devices[:n]
	var opts []CreateOption
	if n > 0 {
		last := devices[n-1]
		if last == nil {
			return Mesh{}, fmt.Errorf("mesh: %w: device at position %d is nil", ErrInvalidMesh, n-1)
		}
		if last.Platform() == "tpu" {
			slicesSeen := map[int]bool{}
			for _, d := range devices {
				if sd, ok := d.(SliceDevice); ok && d != nil {
					slicesSeen[sd.SliceIndex()] = true
				}
			}
			if len(slicesSeen) > 1 {
				return Mesh{}, fmt.Errorf("mesh: %w: MakeMesh does not support multi-slice TPU (devices span %d slices); use CreateHybrid",
					ErrUnsupported, len(slicesSeen))
			}
		}
		if k := last.Kind(); k == "TPU v5 lite" || k == "TPU v5e" {
			opts = append(opts, AllowSplitPhysicalAxes())
		}
	}
	m, err := Create(devices, shape, names, opts...)
	if err != nil {
		return Mesh{}, err
	}
	if len(types) == 0 {
		types = make([]AxisType, len(shape))
		for i := range types {
			types[i] = Explicit
		}
	}
	return m.WithAxisTypes(types...)
}
