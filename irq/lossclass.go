package irq

// lossClass says what a driver's ethtool statistic (a name `ethtool -S`
// prints) counts, when it counts packets lost or held back; ok is false for
// every other name. The names are device-wide counters checked against the
// driver sources named below (Linux, drivers/net/ethernet/).
//
// Left out on purpose:
//   - names that are also interface statistics (rx_dropped, tx_dropped,
//     rx_missed_errors, rx_fifo_errors, rx_over_errors): the drivers read
//     here print the netdev counter, or the register it is set from (igb's
//     rx_missed_errors is stats.mpc, as is its netdev rx_missed_errors),
//     under that name, so the sysfs: entry already has it;
//   - per-queue and per-priority names (rx_queue_0_drops, rx0_drops,
//     rx_prio3_pause, tx_pb_0_pxon, rx_pause_prio_0): only device-wide
//     counters are classified, none summed;
//   - buffer allocation failures (alloc_rx_buff_failed, rx_alloc_fail,
//     rx_buff_alloc_err): each driver names them its own way, and a failure
//     may or may not drop a packet; drivers with netdev qstats report them
//     under one name, qstats:rx-alloc-fail.
//
// virtio_net's drops (rxN_drops, and since 6.10 their total rx_drops) are
// left out too: virtio_net.c virtnet_stats sums the same per-queue counters
// into the interface's rx_dropped.
func lossClass(name string) (LossClass, bool) {
	c, ok := lossClasses[name]
	return c, ok
}

var lossClasses = map[string]LossClass{
	// intel/igb/igb_ethtool.c igb_gstrings_stats, intel/igc/igc_ethtool.c
	// igc_gstrings_stats, intel/e1000e/ethtool.c e1000_gstrings_stats,
	// intel/ixgbe/ixgbe_ethtool.c ixgbe_gstrings_stats: RNBC, no free
	// receive descriptor. XON and XOFF frames both count as pause: either
	// means link flow control is at work.
	"rx_no_buffer_count":   LossNIC,
	"rx_flow_control_xon":  LossPauseRX,
	"rx_flow_control_xoff": LossPauseRX,
	"tx_flow_control_xon":  LossPauseTX,
	"tx_flow_control_xoff": LossPauseTX,

	// intel/ixgbe/ixgbe_ethtool.c ixgbe_gstrings_stats: packets dropped for
	// want of a DMA descriptor (hw_rx_no_dma_resources).
	"rx_no_dma_resources": LossNIC,

	// intel/i40e/i40e_ethtool.c i40e_gstrings_stats (port-level PF
	// statistics; port.rx_dropped was renamed port.rx_discards; kernels
	// before the port. prefix printed the link_* and tx_dropped_link_down
	// names bare, as did early ice).
	"port.rx_dropped":           LossNIC,
	"port.rx_discards":          LossNIC,
	"port.tx_dropped_link_down": LossTX,
	"tx_dropped_link_down":      LossTX,
	"port.link_xon_rx":          LossPauseRX,
	"port.link_xoff_rx":         LossPauseRX,
	"port.link_xon_tx":          LossPauseTX,
	"port.link_xoff_tx":         LossPauseTX,
	"link_xon_rx":               LossPauseRX,
	"link_xoff_rx":              LossPauseRX,
	"link_xon_tx":               LossPauseTX,
	"link_xoff_tx":              LossPauseTX,

	// intel/ice/ice_ethtool.c ice_gstrings_pf_stats (port-level, suffixed
	// .nic).
	"rx_dropped.nic":           LossNIC,
	"tx_dropped_link_down.nic": LossTX,
	"link_xon_rx.nic":          LossPauseRX,
	"link_xoff_rx.nic":         LossPauseRX,
	"link_xon_tx.nic":          LossPauseTX,
	"link_xoff_tx.nic":         LossPauseTX,

	// mellanox/mlx5/core/en_stats.c: q_stats_desc (rx_out_of_buffer, no
	// posted receive WQE), pport_2863_stats_desc (rx/tx_discards_phy, the
	// port's if_in/if_out_discards), pport_802_3_stats_desc (pause frames).
	"rx_out_of_buffer":  LossNIC,
	"rx_discards_phy":   LossNIC,
	"tx_discards_phy":   LossTX,
	"rx_pause_ctrl_phy": LossPauseRX,
	"tx_pause_ctrl_phy": LossPauseTX,

	// mellanox/mlx4/en_ethtool.c main_strings ("flow control statistics").
	"rx_pause": LossPauseRX,
	"tx_pause": LossPauseTX,

	// broadcom/bnxt/bnxt_ethtool.c: bnxt_port_stats_arr (pause frames),
	// bnxt_ring_err_stats_arr (ring discards and out-of-memory discards,
	// summed over rings) and, before it, bnxt_sw_func_stats
	// (rx/tx_total_discard_pkts).
	"rx_pause_frames":        LossPauseRX,
	"tx_pause_frames":        LossPauseTX,
	"rx_total_ring_discards": LossNIC,
	"rx_total_oom_discards":  LossNIC,
	"tx_total_ring_discards": LossTX,
	"rx_total_discard_pkts":  LossNIC,
	"tx_total_discard_pkts":  LossTX,

	// amazon/ena/ena_ethtool.c ena_stats_eni_strings: packets the Nitro
	// card queued or dropped because the instance's allowance was exceeded.
	"bw_in_allowance_exceeded":     LossAllowance,
	"bw_out_allowance_exceeded":    LossAllowance,
	"pps_allowance_exceeded":       LossAllowance,
	"conntrack_allowance_exceeded": LossAllowance,
	"linklocal_allowance_exceeded": LossAllowance,

	// realtek/r8169_main.c rtl8169_gstrings: the chip's 16-bit rx_missed
	// tally counter (a wrap reads as a reset, counting from 0).
	"rx_missed": LossNIC,
}
