package irq

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// QueueKind says what an IRQ vector of a NIC carries.
type QueueKind string

// Queue kinds.
const (
	KindRX    QueueKind = "rx"    // receive only: eth0-rx-0, virtio2-input.0
	KindTX    QueueKind = "tx"    // transmit only: eth0-tx-0, virtio2-output.0
	KindTxRx  QueueKind = "txrx"  // combined: eth0-TxRx-3, mlx5_comp3, or a single-vector NIC
	KindOther QueueKind = "other" // link, config, mailbox, async vectors
)

// How MapQueues found a NIC's IRQs, as reported in NICQueues.MatchedBy.
const (
	MatchMSI  = "msi_irqs" // the PCI function's msi_irqs/ (or legacy irq)
	MatchName = "name"     // action names and chip names in /proc/interrupts
	MatchNone = "none"     // no IRQ found (veth, bridge, USB...)
)

// QueueIRQ is one interrupt vector of a NIC and where it lands.
type QueueIRQ struct {
	IRQ    int       `json:"irq"`
	Action string    `json:"action"`
	Kind   QueueKind `json:"kind"`
	// Index is the queue number in the action name; -1 when it has none.
	Index int `json:"index"`
	// CPUs is where the IRQ lands (see CPUSource); Allowed is
	// smp_affinity_list.
	CPUs      []int  `json:"cpus,omitempty"`
	CPUSource string `json:"cpu_source,omitempty"`
	Allowed   []int  `json:"allowed_cpus,omitempty"`
	Node      int    `json:"node"`
}

// Data reports whether the vector carries packets (rx, tx or txrx).
func (q QueueIRQ) Data() bool { return q.Kind != KindOther }

// NICQueues maps one NIC to its IRQ vectors.
type NICQueues struct {
	NIC       string     `json:"nic"`
	PCI       string     `json:"pci,omitempty"`
	MatchedBy string     `json:"matched_by"`
	Queues    []QueueIRQ `json:"queues,omitempty"`
}

// DataQueues returns the vectors that carry packets.
func (n NICQueues) DataQueues() []QueueIRQ {
	var out []QueueIRQ
	for _, q := range n.Queues {
		if q.Data() {
			out = append(out, q)
		}
	}
	return out
}

// ReadInterrupts reads and parses /proc/interrupts under the root, in
// chunks: its memory is the counts kept (8 bytes a count) and a chunk, not
// the file (a 4096-CPU host's is 60 MB). A file beyond the caps of
// ErrTooLarge is refused.
func ReadInterrupts(ctx context.Context, opts ...Option) (*Interrupts, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := newOptions(opts)
	k := kfile{path: interruptsFile}
	defer k.close()
	x := new(Interrupts)
	if _, err := readInterrupts(o.root, &k, nil, x, keepAll, nil, nil); err != nil {
		return nil, err
	}
	return x, nil
}

// MapQueues finds the IRQ vectors of nic in x and reads where each lands
// from /proc/irq/N under the root. It resolves through the PCI function's
// msi_irqs first and falls back to matching action names (eth0-TxRx-3,
// eth0-rx-0, virtio2-input.0, mlx5_comp3@pci:BDF, r8169-BDF-...). A NIC with
// one vector and no numbered queues gets that vector as its only txrx queue.
func MapQueues(nic nicinfo.NIC, x *Interrupts, opts ...Option) NICQueues {
	o := newOptions(opts)
	return mapQueues(o.root, nic, x)
}

func mapQueues(r fsroot.Root, nic nicinfo.NIC, x *Interrupts) NICQueues {
	out := NICQueues{NIC: nic.Name, MatchedBy: MatchNone}
	bdf := ""
	var msi []int
	if nic.PCI != nil {
		bdf = string(nic.PCI.Address)
		msi = nic.PCI.IRQs
	}
	out.PCI = bdf
	virtio := virtioPrefix(r, bdf, x, msi)
	var rows []int
	if len(msi) > 0 {
		for _, n := range msi {
			if i := x.Index(n); i >= 0 {
				rows = append(rows, i)
			}
		}
		if len(rows) > 0 {
			out.MatchedBy = MatchMSI
		}
	}
	if len(rows) == 0 {
		for i := range x.Lines {
			if x.Lines[i].IRQ >= 0 && rowIsOurs(&x.Lines[i], nic.Name, virtio, bdf) {
				rows = append(rows, i)
			}
		}
		if len(rows) > 0 {
			out.MatchedBy = MatchName
		}
	}
	for _, i := range rows {
		l := &x.Lines[i]
		names := l.ActionNames()
		q := QueueIRQ{IRQ: l.IRQ, Kind: KindOther, Index: -1, Node: -1}
		for _, a := range names {
			if k, idx, ok := classify(a, nic.Name, virtio, anyPCI); ok {
				q.Action, q.Kind, q.Index = a, k, idx
				break
			}
		}
		if q.Action == "" {
			if len(names) > 1 {
				continue // a shared legacy line with none of our names
			}
			if len(names) == 1 {
				q.Action = names[0]
			}
		}
		if aff, err := readAffinity(r, l.IRQ); err == nil {
			q.CPUs, q.CPUSource = aff.CPUs()
			q.Allowed, q.Node = aff.Allowed, aff.Node
		}
		out.Queues = append(out.Queues, q)
	}
	// A bare interface name is the link vector when there are numbered
	// queues, and the only queue of a single-vector NIC otherwise.
	data := 0
	for _, q := range out.Queues {
		if q.Kind != KindOther && q.Kind != kindBare {
			data++
		}
	}
	for i := range out.Queues {
		q := &out.Queues[i]
		if q.Kind == kindBare {
			q.Kind = KindOther
			if data == 0 {
				q.Kind, q.Index = KindTxRx, 0
			}
		}
	}
	if data == 0 && len(out.Queues) == 1 && out.Queues[0].Kind == KindOther {
		out.Queues[0].Kind, out.Queues[0].Index = KindTxRx, 0
	}
	slices.SortStableFunc(out.Queues, func(a, b QueueIRQ) int { return a.IRQ - b.IRQ })
	return out
}

const kindBare = "bare" // internal: the interface name alone

// rowIsOurs reports whether a /proc/interrupts row belongs to the NIC when
// msi_irqs is unknown.
func rowIsOurs(l *Line, iface, virtio, bdf string) bool {
	if bdf != "" && (strings.HasSuffix(l.Chip, "-"+bdf) || strings.Contains(l.Actions, bdf)) {
		return true
	}
	for _, a := range l.ActionNames() {
		if _, _, ok := classify(a, iface, virtio, bdf); ok {
			return true
		}
	}
	return false
}

// virtioPrefix returns "virtioK" for a virtio NIC: from the PCI function's
// directory in sysfs, else from the action names of its msi_irqs.
func virtioPrefix(r fsroot.Root, bdf string, x *Interrupts, msi []int) string {
	if bdf != "" {
		if names, err := r.ReadDir("/sys/bus/pci/devices/" + bdf); err == nil {
			for _, n := range names {
				if isVirtioName(n) {
					return n
				}
			}
		}
	}
	for _, n := range msi {
		if i := x.Index(n); i >= 0 {
			for _, a := range x.Lines[i].ActionNames() {
				if p, _, ok := strings.Cut(a, "-"); ok && isVirtioName(p) {
					return p
				}
			}
		}
	}
	return ""
}

func isVirtioName(s string) bool {
	d, ok := strings.CutPrefix(s, "virtio")
	return ok && d != "" && leadingDigits(d) == len(d)
}

// anyPCI, as classify's bdf, accepts "name@pci:BDF" for any BDF: the row is
// already known to be the NIC's (it is in msi_irqs).
const anyPCI = "*"

// classify reads a queue kind and number out of an action name that belongs
// to iface, to the virtio device virtio, or (for "name@pci:BDF" names) to the
// PCI function bdf. ok is false for names that are not the NIC's.
func classify(action, iface, virtio, bdf string) (kind QueueKind, idx int, ok bool) {
	base, dev, tagged := strings.Cut(action, "@pci:")
	if tagged {
		if bdf == "" || (bdf != anyPCI && dev != bdf) {
			return "", 0, false
		}
		if n, found := strings.CutPrefix(base, "mlx5_comp"); found {
			return KindTxRx, atoiOr(n, -1), true
		}
		return KindOther, -1, true
	}
	if virtio != "" {
		if rest, found := strings.CutPrefix(base, virtio+"-"); found {
			switch {
			case strings.HasPrefix(rest, "input."):
				return KindRX, atoiOr(rest[6:], -1), true
			case strings.HasPrefix(rest, "output."):
				return KindTX, atoiOr(rest[7:], -1), true
			case rest == "virtqueues":
				return KindTxRx, -1, true
			}
			return KindOther, -1, true
		}
	}
	if iface == "" {
		return "", 0, false
	}
	rest, found := afterIface(base, iface)
	if !found {
		return "", 0, false
	}
	if rest == "" {
		return kindBare, -1, true
	}
	r := strings.ToLower(strings.TrimLeft(rest, "-_:."))
	num := func(prefix string) (int, bool) {
		s, ok := strings.CutPrefix(r, prefix)
		if !ok || s == "" || leadingDigits(s) != len(s) {
			return 0, false
		}
		return atoiOr(s, -1), true
	}
	for _, p := range []string{"txrx-", "tx-rx-", "rxtx-", "combined-", "fp-", "queue-", "q", ""} {
		if n, ok := num(p); ok {
			return KindTxRx, n, true
		}
	}
	if n, ok := num("rx-"); ok {
		return KindRX, n, true
	}
	if n, ok := num("tx-"); ok {
		return KindTX, n, true
	}
	return KindOther, -1, true
}

// afterIface finds iface in s as a whole word (at the start, or after '-'
// as in "i40e-eth0-TxRx-0") and returns what follows it.
func afterIface(s, iface string) (string, bool) {
	for off := 0; off < len(s); {
		i := strings.Index(s[off:], iface)
		if i < 0 {
			return "", false
		}
		i += off
		rest := s[i+len(iface):]
		startOK := i == 0 || s[i-1] == '-'
		endOK := rest == "" || strings.ContainsRune("-_:.", rune(rest[0]))
		if startOK && endOK {
			return rest, true
		}
		off = i + 1
	}
	return "", false
}

func atoiOr(s string, def int) int {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return def
	}
	return v
}
