package nicinfo

import (
	"errors"
	"fmt"
	"io/fs"
)

// EEE is ETHTOOL_GEEE (ethtool --show-eee): Energy-Efficient Ethernet
// (IEEE 802.3az), which lets an idle link sleep in Low Power Idle. The mode
// lists are the legacy 32-bit masks the ioctl carries (modes up to 10G).
type EEE struct {
	// Supported, Advertised and PartnerAdvertised are the link modes in
	// which EEE is supported here, advertised here, and advertised by the
	// link partner.
	Supported         []string `json:"supported,omitempty"`
	Advertised        []string `json:"advertised,omitempty"`
	PartnerAdvertised []string `json:"partner_advertised,omitempty"`
	// Active: both ends agreed on EEE for the current link. Enabled: EEE
	// is turned on here. TXLPIEnabled: this end sends Low Power Idle.
	Active       bool `json:"active"`
	Enabled      bool `json:"enabled"`
	TXLPIEnabled bool `json:"tx_lpi_enabled"`
	// TXLPITimerUs is how long the transmitter idles before it enters LPI.
	TXLPITimerUs uint32 `json:"tx_lpi_timer_us,omitempty"`
}

// Pause is ETHTOOL_GPAUSEPARAM (ethtool -a): IEEE 802.3x flow control.
type Pause struct {
	// Autoneg: pause is negotiated with the link partner.
	Autoneg bool `json:"autoneg"`
	// RX: this end honours the partner's PAUSE frames (stops sending).
	// TX: this end sends PAUSE frames when its receive buffers fill.
	RX bool `json:"rx"`
	TX bool `json:"tx"`
}

// Carrier is the netdev's carrier counters in /sys/class/net/IFACE, counted
// since the netdev was created (usually boot; a driver reload or a USB
// replug starts them again).
type Carrier struct {
	// Changes is carrier_changes: every up and every down of the carrier.
	Changes int64 `json:"changes"`
	// Up and Down are carrier_up_count and carrier_down_count (Linux 4.18
	// and later); nil where the kernel has no such file.
	Up   *int64 `json:"up,omitempty"`
	Down *int64 `json:"down,omitempty"`
}

// Downs is the number of times the carrier went down: Down where the
// kernel counts it, else half of Changes (every drop comes with a
// recovery, the link up at boot with none).
func (c *Carrier) Downs() int64 {
	if c == nil {
		return 0
	}
	if c.Down != nil {
		return *c.Down
	}
	return c.Changes / 2
}

// readCarrier reads carrier_changes, carrier_up_count and
// carrier_down_count. A netdev that lacks carrier_changes (old kernels)
// gets no Carrier and no Missing entry: the count is simply unknown; one
// that holds no count gets a Missing entry.
func (r *reader) readCarrier(dir string) {
	v, err := r.root.ReadInt(dir + "/carrier_changes")
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil && v < 0 {
		err = fmt.Errorf("%w: carrier_changes %d", ErrMalformed, v)
	}
	if err != nil {
		r.missing("carrier", err)
		return
	}
	c := &Carrier{Changes: v}
	if u, err := r.root.ReadInt(dir + "/carrier_up_count"); err == nil && u >= 0 {
		c.Up = &u
	}
	if d, err := r.root.ReadInt(dir + "/carrier_down_count"); err == nil && d >= 0 {
		c.Down = &d
	}
	r.nic.Carrier = c
}

func copyEEE(e *EEE) *EEE {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

func copyPause(p *Pause) *Pause {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
