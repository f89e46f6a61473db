//go:build race

package checkpoint_test

// raceEnabled: the race detector makes sync.Pool drop what it is given at random, so that
// counts of the bytes a save allocates do not hold under it.
const raceEnabled = true
