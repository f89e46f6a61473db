package reftest

import (
	"slices"
	"testing"
)

func TestSmallFloats(t *testing.T) {
	got := SmallFloats(15)
	want := []float32{-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, -5, -4}
	if !slices.Equal(got, want) {
		t.Errorf("SmallFloats(15) = %v, want %v", got, want)
	}
}

func TestMatMul(t *testing.T) {
	// [2,3] x [3,2]
	got := MatMul([]float32{1, 2, 3, 4, 5, 6}, []float32{7, 8, 9, 10, 11, 12}, 2, 3, 2)
	want := []float32{58, 64, 139, 154}
	if !slices.Equal(got, want) {
		t.Errorf("MatMul = %v, want %v", got, want)
	}
}
