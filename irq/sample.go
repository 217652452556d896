package irq

import "time"

// Sample is the load over one interval. Rates are per second of the
// interval; percentages are shares of the CPU's time in the interval. The
// JSON field names are a stable contract (monitor --json and --record).
type Sample struct {
	Time      time.Time `json:"time"`
	IntervalS float64   `json:"interval_s"`
	// IRQTimeAccounted is false when the kernel does not account hard-IRQ
	// time (/proc/stat irq is 0 on every CPU): IRQPct is then null, and
	// hard-IRQ time is hidden inside the time of whatever was interrupted.
	IRQTimeAccounted bool      `json:"irq_time_accounted"`
	CPUs             []CPURate `json:"cpus"`
	NICs             []NICRate `json:"nics"`
	// Threads are the tasks of the process tree Sampler.Watch follows,
	// present at both readings; empty when none is watched.
	Threads []ThreadRate `json:"threads,omitempty"`
	// PCIe holds the link state and AER error counts of each PCI function
	// of WithPCIe at the reading.
	PCIe []PCIeState `json:"pcie,omitempty"`
	// Missing names the sources that could not be read this interval.
	Missing []string `json:"missing,omitempty"`
}

// CPURate is one CPU's load over the interval.
type CPURate struct {
	CPU int `json:"cpu"`
	// IRQPct is nil when IRQ time is not accounted.
	IRQPct     *float64 `json:"irq_pct"`
	SoftIRQPct float64  `json:"softirq_pct"`
	// BusyPct is everything but idle, iowait and steal.
	BusyPct float64 `json:"busy_pct"`
	// UserPct is user and nice time; SystemPct kernel time outside
	// interrupts; IdlePct, IOWaitPct and StealPct the rest (steal: time a
	// hypervisor ran something else while this virtual CPU wanted to run).
	// MHz is the CPU's clock at the end of the interval (cpufreq
	// scaling_cur_freq) and MaxMHz its maximum; read only for the four
	// CPUs busiest in the interval before (where the hot core is), and nil
	// elsewhere, in the first interval, without cpufreq (most VMs), or
	// under a snapshot without the files.
	MHz       *float64 `json:"mhz,omitempty"`
	MaxMHz    *float64 `json:"max_mhz,omitempty"`
	UserPct   float64  `json:"user_pct"`
	SystemPct float64  `json:"system_pct"`
	IdlePct   float64  `json:"idle_pct"`
	IOWaitPct float64  `json:"iowait_pct"`
	StealPct  float64  `json:"steal_pct"`
	NetRXPerS float64  `json:"net_rx_per_s"`
	NetTXPerS float64  `json:"net_tx_per_s"`
	// NICIRQsPerS counts the interrupts of the sampled NICs' vectors that
	// this CPU took.
	NICIRQsPerS          float64 `json:"nic_irqs_per_s"`
	SoftnetProcessedPerS float64 `json:"softnet_processed_per_s"`
	SoftnetDroppedPerS   float64 `json:"softnet_dropped_per_s"`
	SoftnetSqueezedPerS  float64 `json:"softnet_squeezed_per_s"`
}

// PacketPct returns irq+softirq time (softirq alone when IRQ time is not
// accounted).
func (c CPURate) PacketPct() float64 {
	if c.IRQPct != nil {
		return *c.IRQPct + c.SoftIRQPct
	}
	return c.SoftIRQPct
}

// NICRate is one NIC's traffic and interrupts over the interval.
type NICRate struct {
	Name          string  `json:"name"`
	RXPacketsPerS float64 `json:"rx_packets_per_s"`
	TXPacketsPerS float64 `json:"tx_packets_per_s"`
	RXBytesPerS   float64 `json:"rx_bytes_per_s"`
	TXBytesPerS   float64 `json:"tx_bytes_per_s"`
	RXDroppedPerS float64 `json:"rx_dropped_per_s"`
	// StatsError says why the packet counters could not be read.
	StatsError string `json:"stats_error,omitempty"`
	// QueueStatsError says why the per-queue counters could not be read
	// (see QueueRate.RXPacketsPerS).
	QueueStatsError string      `json:"queue_stats_error,omitempty"`
	IRQsPerS        float64     `json:"irqs_per_s"`
	Queues          []QueueRate `json:"queues,omitempty"`
	// Losses are the counters of packets lost or held back that moved or
	// exist for this NIC, by source: the interface statistics, the kernel's
	// netdev queue statistics, the driver's ethtool statistics.
	Losses []LossRate `json:"losses,omitempty"`
}

// LossClass says where a counted packet was lost or held back.
type LossClass string

// Loss classes.
const (
	// LossNIC: a received packet the NIC (or its driver) dropped before
	// the stack saw it: no free descriptor, FIFO overrun, missed.
	LossNIC LossClass = "nic"
	// LossTX: a packet the host meant to send and dropped.
	LossTX LossClass = "tx"
	// LossPauseRX: pause frames received: the peer asked this host to
	// stop sending.
	LossPauseRX LossClass = "pause_rx"
	// LossPauseTX: pause frames sent: this host asked the peer to stop.
	LossPauseTX LossClass = "pause_tx"
	// LossAllowance: a cloud NIC's per-instance allowance was exceeded and
	// the platform dropped or queued packets (ENA's *_allowance_exceeded).
	LossAllowance LossClass = "allowance"
	// LossDropped: the interface's rx_dropped, which mixes the NIC's drops
	// (on drivers that count theirs there) with the kernel's own: a full
	// backlog, frames for a protocol nobody listens to. Listed, not judged
	// as NIC drops.
	LossDropped LossClass = "dropped"
)

// LossRate is one loss counter of a NIC over the interval.
type LossRate struct {
	// Name is the counter's name as its source spells it, with the source
	// first: "sysfs:rx_missed_errors", "qstats:rx-hw-drops",
	// "ethtool:rx_no_buffer_count", "ethtool-nl:rx_pause_frames" (the
	// kernel's standard pause statistics, over ethtool netlink).
	Name  string    `json:"name"`
	Class LossClass `json:"class"`
	PerS  float64   `json:"per_s"`
}

// ThreadRate is one task (thread) of a watched process tree over the
// interval. Percentages are of one CPU.
type ThreadRate struct {
	PID       int     `json:"pid"` // the thread group (process)
	TID       int     `json:"tid"`
	Comm      string  `json:"comm"`
	UserPct   float64 `json:"user_pct"`
	SystemPct float64 `json:"system_pct"`
	// CPU is the CPU it last ran on (/proc/PID/task/TID/stat field 39).
	CPU int `json:"cpu"`
}

// BusyPct is the thread's user and system time.
func (t ThreadRate) BusyPct() float64 { return t.UserPct + t.SystemPct }

// PCIeState is one PCI function's link and AER counters at a reading.
type PCIeState struct {
	Address string `json:"address"`
	// GTs and Width are the link's current speed and width (0: unread).
	GTs   float64 `json:"gts"`
	Width int     `json:"width"`
	// AERCorrectable, AERNonFatal and AERFatal are the errors the function
	// logged in the interval (the TOTAL_ERR_* lines of its aer_dev_*
	// files); nil when the kernel exposes no AER counters for it.
	AERCorrectable *uint64 `json:"aer_correctable,omitempty"`
	AERNonFatal    *uint64 `json:"aer_nonfatal,omitempty"`
	AERFatal       *uint64 `json:"aer_fatal,omitempty"`
	// Error says why the state could not be read.
	Error string `json:"error,omitempty"`
}

// QueueRate is one IRQ vector of a NIC over the interval.
type QueueRate struct {
	IRQ    int       `json:"irq"`
	Action string    `json:"action"`
	Kind   QueueKind `json:"kind"`
	Index  int       `json:"index"`
	// IRQsPerS counts its interrupts on all CPUs.
	IRQsPerS float64 `json:"irqs_per_s"`
	// CPU took most of its interrupts this interval; -1 when it had none.
	CPU int `json:"cpu"`
	// EffectiveCPUs is where the kernel routes it (see MapQueues).
	EffectiveCPUs []int `json:"effective_cpus,omitempty"`
	// RXPacketsPerS, RXBytesPerS, TXPacketsPerS and TXBytesPerS are the
	// traffic of the queue numbered Index, from per-queue counters: the
	// kernel's netdev queue statistics (Linux 6.8+: virtio_net since 6.10,
	// mlx5, bnxt_en, gve, ice, ...) or else the driver's ethtool
	// statistics (igb, igc, ixgbe, i40e, iavf, ice, mlx4/mlx5, ena,
	// bnxt_en, hv_netvsc, sfc; see WithNetns): rx for rx and txrx vectors,
	// tx for tx and txrx vectors. Each is nil (omitted in JSON) when the
	// driver has no such counter for the queue, when the vector has no
	// queue number, and in the first interval a counter is seen.
	RXPacketsPerS *float64 `json:"rx_packets_per_s,omitempty"`
	RXBytesPerS   *float64 `json:"rx_bytes_per_s,omitempty"`
	TXPacketsPerS *float64 `json:"tx_packets_per_s,omitempty"`
	TXBytesPerS   *float64 `json:"tx_bytes_per_s,omitempty"`
}

// HasTraffic reports whether any per-queue packet or byte rate is known.
func (q QueueRate) HasTraffic() bool {
	return q.RXPacketsPerS != nil || q.RXBytesPerS != nil || q.TXPacketsPerS != nil || q.TXBytesPerS != nil
}
