package mlir

import "strconv"

// Partitioner names how a module's shardings are written, and so which of XLA's partitioners
// reads them: Shardy (the `sdy` dialect) or GSPMD (`mhlo.sharding` strings). It is the one
// partitioner type of xlamesh: lower writes modules for one, pjrt compiles with one (the
// use_shardy_partitioner build option), and lower.Partitioner and pjrt.Partitioner are aliases
// of it. The zero value is no partitioner; pjrt.CompileOptions reads it as Shardy.
type Partitioner uint8

const (
	Shardy Partitioner = iota + 1 // sdy.mesh, sdy.sharding, sdy.sharding_constraint, sdy.manual_computation
	GSPMD                         // mhlo.sharding strings and @Sharding / @SPMD*Shape custom calls
)

// String returns "Shardy" or "GSPMD".
func (p Partitioner) String() string {
	switch p {
	case Shardy:
		return "Shardy"
	case GSPMD:
		return "GSPMD"
	}
	return "Partitioner(" + strconv.Itoa(int(p)) + ")"
}
