package oracletest

import "github.com/xlamesh/xlamesh/shardy"

// The GSPMD comparison lives apart so the rest of the oracle builds without
// shardy's conversion.
func init() { gspmdText = shardy.GSPMD }
