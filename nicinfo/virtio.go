package nicinfo

import (
	"fmt"
	"path"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// VirtioNetFMQ is VIRTIO_NET_F_MQ, the feature bit by which a virtio-net
// device offers more than one queue pair (Linux
// include/uapi/linux/virtio_net.h: "Device supports Receive Flow
// Steering"). Without it the guest has one receive and one transmit queue
// whatever it asks for: the count is the host's (QEMU's mq=on and queues=N,
// libvirt's <driver queues='N'/>).
const VirtioNetFMQ = 22

// maxVirtioFeatures bounds the features string: the kernel prints one
// character per bit of its feature word (64 bits, 128 since 6.x).
const maxVirtioFeatures = 1024

// VirtioDevice is the virtio device a virtio_net interface hangs off: the
// netdev's device, /sys/bus/virtio/devices/virtioN, whose parent is the PCI
// (or MMIO) function.
type VirtioDevice struct {
	// Name is the device's name ("virtio0").
	Name string `json:"name"`
	// Features is its features file: one '0' or '1' per feature bit, bit 0
	// first. The bits are those the driver and the device agreed on: the
	// device's offer ANDed with what the driver supports (virtio_net
	// supports VIRTIO_NET_F_MQ, so a clear bit 22 means the device did not
	// offer it). "" when the file could not be read.
	Features string `json:"features,omitempty"`
}

// Feature reports whether feature bit was negotiated, and whether that is
// known (the features file was read and is long enough).
func (v *VirtioDevice) Feature(bit int) (on, known bool) {
	if v == nil || bit < 0 || bit >= len(v.Features) {
		return false, false
	}
	return v.Features[bit] == '1', true
}

// parseVirtioFeatures checks a virtio device's features file: only '0' and
// '1', at most maxVirtioFeatures of them, surrounding space ignored.
func parseVirtioFeatures(s string) (string, error) {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > maxVirtioFeatures || strings.Trim(t, "01") != "" {
		return "", fmt.Errorf("%w: virtio features %q", ErrMalformed, text.Clip(s))
	}
	return t, nil
}

// isVirtioDevice reports whether the kernel path dev is a virtio device:
// its subsystem is the virtio bus, or (a snapshot without the subsystem
// link) its name is virtioN.
func (r *reader) isVirtioDevice(dev string) bool {
	if s, err := r.root.LinkBase(dev + "/subsystem"); err == nil {
		return s == "virtio"
	}
	num, ok := strings.CutPrefix(path.Base(dev), "virtio")
	return ok && isDec(num)
}

// readVirtio fills NIC.Virtio for a netdev whose device is a virtio
// device. An absent features file leaves Features empty (old snapshots
// lack it); a malformed one is named in Missing.
func (r *reader) readVirtio(dev string) {
	if !r.isVirtioDevice(dev) {
		return
	}
	v := &VirtioDevice{Name: text.Clip(text.Clean(path.Base(dev)))}
	r.nic.Virtio = v
	s, err := r.root.ReadString(dev + "/features")
	if err != nil {
		return
	}
	if f, err := parseVirtioFeatures(s); err != nil {
		r.missing("virtio.features", err)
	} else {
		v.Features = f
	}
}
