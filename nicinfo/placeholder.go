package nicinfo

import (
	"slices"
	"strings"
)

// usbnetDrivers are usbnet minidrivers that report the link through
// usbnet's own settings call without a PHY (no MII), so the duplex is
// never filled in (Linux drivers/net/usb/usbnet.c,
// usbnet_get_link_ksettings_internal, sets the speed only).
var usbnetDrivers = []string{"cdc_ncm", "cdc_ether", "cdc_mbim", "cdc_subset", "rndis_host", "huawei_cdc_ncm", "qmi_wwan", "ipheth"}

// markPlaceholders records in n.Link.Nominal the link fields that the
// driver did not measure. A half duplex with no supported or advertised
// mode and autoneg off comes from a driver that knows no PHY: usbnet's
// drivers leave duplex at its zero value, which reads as half. A driver
// that lists the PHY's modes, or negotiated, reports a real duplex.
func markPlaceholders(n *NIC) {
	l := &n.Link
	noPHY := len(l.Supported) == 0 && len(l.Advertised) == 0 && (l.Autoneg == nil || !*l.Autoneg)
	if l.Duplex == DuplexHalf && noPHY {
		why := "duplex: half is the zero value of a driver that reports no PHY (no link modes, no autoneg); the real duplex is unknown"
		if slices.Contains(usbnetDrivers, n.Driver) {
			why = "duplex: " + n.Driver + " is a usbnet driver, which never fills in the duplex (it reads as half); the real duplex is unknown"
		}
		l.Nominal = append(l.Nominal, why)
	}
}

// nominalField reports whether field is among l.Nominal.
func nominalField(l Link, field string) bool {
	return slices.ContainsFunc(l.Nominal, func(s string) bool { return strings.HasPrefix(s, field+": ") })
}
