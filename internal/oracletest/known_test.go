package oracletest

// knownDiff explains a disagreement with JAX that the tests accept.
type knownDiff struct {
	status string // statusDeliberate or statusOpen
	why    string
}

// known lists, by "group/case", every disagreement with JAX that is either a
// deliberate xlamesh choice or an open issue reported to the package that
// owns it. Anything else that disagrees fails the tests.
var known = map[string]knownDiff{}
