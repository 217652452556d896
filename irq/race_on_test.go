//go:build race

package irq

// raceEnabled: the race detector's shadow memory counts in a process's
// resident memory.
const raceEnabled = true
