//go:build race

package exporterhttp

// raceEnabled: the race detector's shadow memory counts in a process's
// resident memory.
const raceEnabled = true
