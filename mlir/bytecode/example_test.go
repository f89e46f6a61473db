package bytecode_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
)

// ToText turns the module of a jax.export artifact into StableHLO text.
func ExampleToText() {
	raw, _ := os.ReadFile("../../testdata/oracle/bytecode.json")
	var f struct {
		Programs []struct{ Name, Exported string }
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range f.Programs {
		if p.Name != "gspmd" {
			continue
		}
		b, _ := base64.StdEncoding.DecodeString(p.Exported)
		e, err := jaxexport.Read(b)
		if err != nil {
			fmt.Println(err)
			return
		}
		info, _ := bytecode.ReadInfo(e.Module())
		fmt.Println(info.Producer)
		text, err := bytecode.ToText(e.Module())
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "func.func public @main") || strings.Contains(line, `"Sharding"`) {
				fmt.Println(strings.TrimSpace(line))
			}
		}
	}
	// Output:
	// StableHLO_v1.18.0
	// func.func public @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<4x4xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) -> (tensor<8x4xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}) {
	// %3 = "stablehlo.custom_call"(%2) <{call_target_name = "Sharding"}> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
}
