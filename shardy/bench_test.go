package shardy

import "testing"

// Printing and parsing run once per annotated value when lowering; these
// keep an eye on their cost (go test -bench=. ./shardy/).

var benchText = `#sdy.sharding<@mesh, [{"x", "y"}p0, {?}, {}], replicated={"z"}>`

func BenchmarkTensorShardingString(b *testing.B) {
	s := MustParseTensorSharding(benchText)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.String()
	}
}

func BenchmarkParseTensorSharding(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseTensorSharding(benchText); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGSPMD(b *testing.B) {
	m := MustParseMesh(`<["x"=2, "y"=2, "z"=2]>`)
	s := MustParseTensorSharding(benchText)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GSPMD(m); err != nil {
			b.Fatal(err)
		}
	}
}
