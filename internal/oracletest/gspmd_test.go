package oracletest

import "github.com/xlamesh/xlamesh/shardy"

// The GSPMD comparison lives apart so the rest of the oracle builds without
// shardy's conversion; its known disagreements live with it.
func init() {
	gspmdText = shardy.GSPMD
	for _, name := range []string{"single_device_x", "m1_x_5", "m1_none_x_2x3"} {
		known["sharding/"+name] = knownDiff{statusOpen, whyGSPMDOneDevice}
	}
}
