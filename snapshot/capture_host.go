package snapshot

import (
	"strings"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// hostFactFiles are the host-wide files of the host audit
// (nicdiag.HostFacts): cpuidle's driver and governor, intel_idle's
// max_cstate, connection tracking's sysctls and statistics, and bridge
// netfilter's sysctls. Of the kernel command line only the idle
// parameters are kept (copyCmdline).
var hostFactFiles = []string{
	nicinfo.CPUIdleDir + "/current_driver", nicinfo.CPUIdleDir + "/current_governor",
	nicinfo.CPUIdleDir + "/current_governor_ro", nicinfo.IntelMaxCState,
	nicinfo.ConntrackCountFile, nicinfo.ConntrackMaxFile, nicinfo.ConntrackBucketsFile, nicinfo.ConntrackStatFile,
	nicinfo.BridgeNFDir + "/" + nicinfo.BridgeNFFiles[0], nicinfo.BridgeNFDir + "/" + nicinfo.BridgeNFFiles[1],
	nicinfo.BridgeNFDir + "/" + nicinfo.BridgeNFFiles[2], nicinfo.KernelReleaseFile,
}

// keptStat is what a capture keeps of the driver's statistics: the loss
// counters (irq.IsLossStat) and the damaged-frame counters
// (nicinfo.IsLinkErrorStat), as nicdiag's own live source does.
func keptStat(name string) bool { return irq.IsLossStat(name) || nicinfo.IsLinkErrorStat(name) }

// copyHostFacts copies hostFactFiles and the kernel command line's idle
// parameters.
func (c *copier) copyHostFacts() {
	for _, f := range hostFactFiles {
		if c.fatal != nil {
			return
		}
		c.copyFile(f)
	}
	c.copyCmdline()
}

// copyCmdline writes /proc/cmdline with the idle parameters alone
// (nicinfo.IdleCmdline): the rest of a command line may carry credentials.
func (c *copier) copyCmdline() {
	c.copyKept(nicinfo.CmdlineFile, func(b []byte) []byte { return []byte(nicinfo.IdleCmdline(string(b))) })
}

// copyIdle copies CPU directory cpu's idle states (cpuidle/stateK, the
// files nicinfo.ReadIdle reads) and its PM QoS resume latency.
func (c *copier) copyIdle(cpu string) {
	c.copyNames(cpu+"/power", []string{"pm_qos_resume_latency_us"})
	names, err := c.list(cpu + "/cpuidle")
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, "state") && len(n) <= len("state")+2 && c.fatal == nil {
			c.copyNames(cpu+"/cpuidle/"+n, nicinfo.IdleStateFiles())
		}
	}
}
