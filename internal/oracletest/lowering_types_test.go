package oracletest

// loweringArg is one argument of a lowered program.
type loweringArg struct {
	Shape []int  `json:"shape"`
	Spec  []any  `json:"spec"`
	DType string `json:"dtype"`
}

// loweringCase is one case of testdata/oracle/lowering.json.
type loweringCase struct {
	caseHead
	Program     string        `json:"program"`
	Partitioner string        `json:"partitioner"` // "" (Shardy) or "gspmd"
	Mesh        meshJSON      `json:"mesh"`
	Args        []loweringArg `json:"args"`
	Out         []any         `json:"out"`
	JAX         struct {
		StableHLO string `json:"stablehlo"`
		Result    struct {
			Shape  []int     `json:"shape"`
			DType  string    `json:"dtype"`
			Values []float64 `json:"values"`
		} `json:"result"`
		Error *jaxError `json:"error,omitempty"`
	} `json:"jax"`
}
