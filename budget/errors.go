package budget

import (
	"errors"
)

// Errors returned by Solve and For. They are wrapped with details; test for
// them with errors.Is.
var (
	// ErrInvalidLink reports a hop that cannot be modelled: no hops, an
	// unknown speed, a width that is not 1, 2, 4, 8, 12, 16 or 32, or an
	// MPS, MRRS or RCB the spec does not allow.
	ErrInvalidLink = errors.New("budget: invalid link parameters")
	// ErrInvalidWorkload reports a frame size outside 64..16384 B, an
	// unknown direction, a port count outside 0..1024 (or below 2 for
	// Forward), or a port speed that is not a positive finite number.
	ErrInvalidWorkload = errors.New("budget: invalid workload")
	// ErrInvalidProfile reports a DMA profile with a negative or absurdly
	// large field.
	ErrInvalidProfile = errors.New("budget: invalid DMA profile")
	// ErrVirtual reports a virtual device (virtio, vmxnet3): its "link" is
	// emulated and no DMA model applies.
	ErrVirtual = errors.New("budget: virtual device, no PCIe model applies")
)
