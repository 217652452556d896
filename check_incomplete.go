package nicdiag

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/pcie"
)

// incompleteCheck: what could not be judged (nicdiag.incomplete), so that a
// check family that did not run never reads as a clean result. One finding
// per subject: each entry of Host.Unread about a NIC (its PCIe path could
// not be walked, its budget could not be solved, its module EEPROM could
// not be read), the host-wide entries
// (/proc/interrupts, the PCI functions without a netdev) under HostSubject,
// and, for a judged NIC whose PCIe path has config space cut to the 64-byte
// header for lack of root, which verdicts that weakens. Check keeps one
// finding per (code, subject), so several causes about one subject are
// joined into one finding at the worst of their severities. An entry whose
// cause is only missing privilege (os.ErrPermission, but not fsroot's
// refusals of a non-regular file or an escaping symlink), or a snapshot
// that holds no /proc at all, is info (a privilege cause's fix names the
// capability that lifts it); any other is warn.
var incompleteCheck = Checker{
	Name:  "incomplete",
	Codes: []finding.Code{finding.NicdiagIncomplete},
	Run: func(h *Host) []finding.Finding {
		by := map[string]*incomplete{}
		var order []string
		add := func(subject string, sev finding.Severity, key, sentence, capability string) {
			c := by[subject]
			if c == nil {
				c = &incomplete{evidence: map[string]string{}}
				by[subject] = c
				order = append(order, subject)
			}
			if sev > c.sev {
				c.sev = sev
			}
			if capability != "" && !slices.Contains(c.caps, capability) {
				c.caps = append(c.caps, capability)
			}
			c.sentences = append(c.sentences, sentence)
			c.evidence[key] = sentence
		}
		for _, u := range h.Unread {
			subject := u.Subject
			if subject == "" {
				subject = HostSubject
			}
			sev := finding.Warn
			capability := ""
			switch {
			case onlyPrivilege(u.Err):
				sev, capability = finding.Info, capabilityFor(u.Part)
			case errors.Is(u.Err, errNoProc):
				sev = finding.Info
			}
			add(subject, sev, string(u.Part), unreadSentence(u), capability)
			by[subject].noProc = by[subject].noProc || errors.Is(u.Err, errNoProc)
		}
		for _, n := range h.Selected {
			if !n.Judged() || n.Path == nil {
				continue
			}
			for _, e := range damagedConfig(n.Path) {
				add(n.ID(), finding.Warn, "config "+string(e.Address), fmt.Sprintf(
					"the config space of %s (/sys/bus/pci/devices/%s/config) is damaged (%s), so its link capability, ASPM and any Thunderbolt tunnel are unknown and the PCIe verdicts on that hop may be missing",
					e.Address, e.Address, strings.TrimPrefix(e.ConfigNote, pcie.ConfigDamaged)), "")
			}
			if ends := needsRoot(n.Path); len(ends) > 0 {
				add(n.ID(), finding.Info, "config space", fmt.Sprintf(
					"the config space of %s past the 64-byte header needs root, so MPS is assumed 128 bytes and MRRS 512 (pcie.bottleneck's ceiling may be low) and ASPM and the target link speed are unknown (a link idling at a lower speed under ASPM reads as pcie.link_downgraded instead of pcie.idle_downtrained)",
					strings.Join(ends, ", ")), capSysAdmin)
			}
		}
		out := make([]finding.Finding, 0, len(order))
		for _, s := range order {
			c := by[s]
			var fix string
			if c.noProc {
				fix = "Take the snapshot with `nicdiag snapshot`, which holds /proc's interrupt and CPU files, to have the checks named above run too."
			}
			if len(c.caps) > 0 {
				fix = strings.TrimSpace(fix + " Run nicdiag, or take the snapshot (`nicdiag snapshot`), as root or with " + strings.Join(c.caps, " and ") + " to read what it could not.")
			}
			if c.sev > finding.Info {
				fix = "Check that the files named are present and readable (a snapshot may lack them), then run the check again; the checks named above did not run."
			}
			out = append(out, finding.Finding{
				Code:     finding.NicdiagIncomplete,
				Severity: c.sev,
				Subject:  s,
				Summary:  s + ": not fully checked: " + strings.Join(c.sentences, "; ") + ".",
				Fix:      fix,
				Evidence: c.evidence,
			})
		}
		return out
	},
}

type incomplete struct {
	sev       finding.Severity
	noProc    bool // an entry is for a snapshot without /proc
	sentences []string
	evidence  map[string]string
	caps      []string // the capabilities that lift the privilege causes
}

// capSysAdmin lets a process read PCI config space past its 64-byte
// header (pci_read_config in drivers/pci/pci-sysfs.c) and the files only
// root reads.
const capSysAdmin = "CAP_SYS_ADMIN"

// capabilityFor is the capability that lifts a lack of privilege reading
// p: CAP_NET_ADMIN for the module EEPROM request (ethtool netlink's
// GENL_UNS_ADMIN_PERM), else CAP_SYS_ADMIN.
func capabilityFor(p Part) string {
	if p == PartModule {
		return "CAP_NET_ADMIN"
	}
	return capSysAdmin
}

// onlyPrivilege reports whether err is only a lack of privilege: it
// matches os.ErrPermission and is not one of fsroot's refusals (a FIFO or
// a symlink out of a snapshot), which also match it but that root does not
// lift.
func onlyPrivilege(err error) bool {
	return errors.Is(err, os.ErrPermission) && !errors.Is(err, fsroot.ErrNotRegular) && !errors.Is(err, fsroot.ErrEscape)
}

// unreadSentence says what was not checked because of u, and why.
func unreadSentence(u Unread) string {
	switch u.Part {
	case PartInterrupts:
		return fmt.Sprintf("/proc/interrupts could not be read, so queue IRQ placement was not checked (irq.affinity_concentrated, irq.numa_remote) and nic.single_queue did not know the CPU count: %v", u.Err)
	case PartPath:
		return fmt.Sprintf("the PCIe path could not be walked, so no PCIe verdict was made (pcie.bottleneck, pcie.link_downgraded, pcie.slot_limited, pcie.idle_downtrained): %v", u.Err)
	case PartBudget:
		return fmt.Sprintf("the throughput budget could not be solved, so pcie.bottleneck was not judged: %v", u.Err)
	case PartNetdev:
		return fmt.Sprintf("what the interface sits on could not be read, so no check of its device ran (its PCIe path, driver, queues and IRQs): %v", u.Err)
	case PartModule:
		if onlyPrivilege(u.Err) {
			return fmt.Sprintf("the module EEPROM could not be read (the kernel answers the module EEPROM request only to a process with CAP_NET_ADMIN), so the module's own diagnostics were not judged (nic.module_diagnostics): %v", u.Err)
		}
		return fmt.Sprintf("the module EEPROM could not be read or decoded, so the module's own diagnostics were not judged (nic.module_diagnostics): %v", u.Err)
	case PartNoNetdev:
		return fmt.Sprintf("the PCI network functions without a netdev (vfio-pci, unbound) could not be listed, so they were neither listed nor checked: %v", u.Err)
	}
	return fmt.Sprintf("%s could not be read: %v", u.Part, u.Err)
}

// damagedConfig returns the ends of the path whose config file is
// damaged (pcie.ConfigDamaged), each once.
func damagedConfig(p *pcie.Path) []pcie.End {
	var out []pcie.End
	seen := map[pcie.Address]bool{}
	for _, e := range append([]pcie.End{p.Device}, hopEnds(p)...) {
		if e.Address != "" && !seen[e.Address] && strings.HasPrefix(e.ConfigNote, pcie.ConfigDamaged) {
			seen[e.Address] = true
			out = append(out, e)
		}
	}
	return out
}

// hopEnds are both ends of each hop of p.
func hopEnds(p *pcie.Path) []pcie.End {
	var out []pcie.End
	for _, hop := range p.Hops {
		out = append(out, hop.Upstream, hop.Downstream)
	}
	return out
}

// needsRoot returns the addresses of the path's ends whose config space was
// cut to the header for lack of root, sorted.
func needsRoot(p *pcie.Path) []string {
	seen := map[string]bool{}
	check := func(e pcie.End) {
		if e.Address != "" && strings.Contains(e.ConfigNote, "needs root") {
			seen[string(e.Address)] = true
		}
	}
	check(p.Device)
	for _, hop := range p.Hops {
		check(hop.Upstream)
		check(hop.Downstream)
	}
	out := make([]string, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}
