//go:build !linux

package irq

import "errors"

// nsConn keeps no sockets off Linux: newNSConn returns nil, and the
// sampler reads the root's files alone (newOptions).
type nsConn struct{}

var errNotLinux = errors.New("not Linux")

func newNSConn(string) *nsConn { return nil }

func (c *nsConn) begin() {}
func (c *nsConn) end()   {}
func (c *nsConn) close() {}

func (c *nsConn) linkStats(string) (linkCounters, error)     { return linkCounters{}, errNotLinux }
func (c *nsConn) ethtoolStats(string) (*ethtoolTable, error) { return nil, errNotLinux }
