package nicinfo

// EthtoolSchema is the version of the EthtoolAnswers JSON layout.
const EthtoolSchema = 1

// EthtoolAnswers is what the ethtool ioctls answered for one interface. On
// the live host nicdiag asks the kernel; in a snapshot the same answers are
// read from ethtool/IFACE.json, which holds this struct as JSON:
//
//	{
//	  "schema": 1,
//	  "driver": "igb", "version": "5.10.0", "firmware_version": "1.2.3",
//	  "bus_info": "0000:01:00.0",
//	  "link": {"speed_mbps": 1000, "duplex": "full", "autoneg": true, "port": "TP",
//	           "supported": ["1000baseT/Full"], "advertised": ["1000baseT/Full"],
//	           "partner_advertised": ["100baseT/Full", "1000baseT/Full"]},
//	  "channels": {"max_rx": 0, "max_tx": 0, "max_other": 1, "max_combined": 8,
//	               "rx": 0, "tx": 0, "other": 1, "combined": 4},
//	  "perm_addr": "00:1b:21:00:00:01",
//	  "rings": {"rx": 256, "tx": 256, "rx_max": 4096, "tx_max": 4096},
//	  "loss_stats": {"rx_no_buffer_count": 0, "rx_flow_control_xoff": 12},
//	  "eee": {"supported": ["100baseT/Full", "1000baseT/Full"],
//	          "advertised": ["100baseT/Full", "1000baseT/Full"],
//	          "partner_advertised": ["1000baseT/Full"],
//	          "active": true, "enabled": true, "tx_lpi_enabled": true, "tx_lpi_timer_us": 0},
//	  "pause": {"autoneg": true, "rx": true, "tx": true},
//	  "errors": {"channels": "operation not supported"},
//	  "features": {"rx-gro": {"active": true, "requested": true},
//	               "rx-lro": {"active": false, "fixed": true},
//	               "tx-tcp-segmentation": {"active": true, "requested": true}},
//	  "coalesce": {"rx_usecs": 3, "tx_usecs": 3, "source": "netlink"}
//	}
//
// A request that failed has no field and an entry in Errors, keyed by the
// field name it would have filled ("driver" covers driver, version,
// firmware_version and bus_info). Features and Coalesce came later than
// schema 1's other fields: a file without them reads as one whose
// requests were not made (nil), not as offloads that are off.
type EthtoolAnswers struct {
	Schema          int               `json:"schema"`
	Driver          string            `json:"driver,omitempty"`
	Version         string            `json:"version,omitempty"`
	FirmwareVersion string            `json:"firmware_version,omitempty"`
	BusInfo         string            `json:"bus_info,omitempty"`
	Link            *EthtoolLink      `json:"link,omitempty"`
	Channels        *Channels         `json:"channels,omitempty"`
	PermAddr        string            `json:"perm_addr,omitempty"`
	Errors          map[string]string `json:"errors,omitempty"`
	// Rings is ETHTOOL_GRINGPARAM (ethtool -g); absent from files written
	// before nicdiag asked for it, and for drivers without it (veth).
	Rings *Rings `json:"rings,omitempty"`
	// LossStats are the driver's ETHTOOL_GSTATS counters (ethtool -S) that
	// the live source was told to keep (KeepStats; nicdiag keeps the loss
	// counters irq.LossClassOf knows), since the driver started counting;
	// absent when none was kept, the driver has no statistics, or the file
	// predates them.
	LossStats map[string]uint64 `json:"loss_stats,omitempty"`
	// Features are the judged offloads (JudgedFeatures) by kernel name,
	// from ETHTOOL_GFEATURES.
	Features map[string]Feature `json:"features,omitempty"`
	// Coalesce is the interrupt moderation, from ETHTOOL_MSG_COALESCE_GET
	// (or ETHTOOL_GCOALESCE).
	Coalesce *Coalesce `json:"coalesce,omitempty"`
	// EEE is ETHTOOL_GEEE (ethtool --show-eee); absent for drivers
	// without it (veth, virtio_net) and from files that predate it.
	EEE *EEE `json:"eee,omitempty"`
	// Pause is ETHTOOL_GPAUSEPARAM (ethtool -a); absent for drivers
	// without it and from files that predate it.
	Pause *Pause `json:"pause,omitempty"`
	// FEC is ETHTOOL_MSG_FEC_GET with statistics (ethtool -I
	// --show-fec); absent for drivers without FEC.
	FEC *FEC `json:"fec,omitempty"`
	// Module are the pluggable module's EEPROM pages (ETHTOOL_MSG_
	// MODULE_EEPROM_GET, ethtool -m) that carry its diagnostics; absent
	// without a module or module access.
	Module []ModulePage `json:"module_eeprom,omitempty"`
}

// EthtoolLink is ETHTOOL_GLINKSETTINGS (or legacy GSET) decoded.
type EthtoolLink struct {
	// SpeedMbps is -1 when the driver reports SPEED_UNKNOWN.
	SpeedMbps  int      `json:"speed_mbps"`
	Duplex     string   `json:"duplex"` // "full", "half", "unknown"
	Autoneg    bool     `json:"autoneg"`
	Port       string   `json:"port,omitempty"`
	Supported  []string `json:"supported,omitempty"`
	Advertised []string `json:"advertised,omitempty"`
	// PartnerAdvertised is the link partner's advertised modes (the
	// lp_advertising mask of GLINKSETTINGS, lp_advertising of GSET);
	// absent from files that predate it, and when nothing was received.
	PartnerAdvertised []string `json:"partner_advertised,omitempty"`
	// Source is "GLINKSETTINGS" or "GSET" (32-bit masks: no modes of 25G and up).
	Source string `json:"source,omitempty"`
}
