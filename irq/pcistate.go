package irq

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/pcie"
)

// maxSysfsFile bounds one sysfs attribute: a page, 64 KiB on some arm64
// and ppc64 kernels.
const maxSysfsFile = 64 << 10

// aerFiles are the AER statistics files of a function and their total
// lines, in the order of pciRead.aer.
var aerFiles = [3]struct{ file, total string }{
	{pcie.AERCorrectableFile, pcie.AERCorrectableTotal},
	{pcie.AERNonFatalFile, pcie.AERNonFatalTotal},
	{pcie.AERFatalFile, pcie.AERFatalTotal},
}

// pciRead is one PCI function of WithPCIe at a reading.
type pciRead struct {
	addr   string // canonical when it parses
	gts    float64
	width  int
	aer    [3]uint64 // correctable, nonfatal, fatal totals
	hasAER [3]bool
	err    string
}

// pciFunc is a function of WithPCIe and its files, kept open between
// readings.
type pciFunc struct {
	addr   string // canonical when it parses, else as given
	badErr string // why it does not parse
	dir    string
	speed  kfile
	width  kfile
	aer    [3]kfile
	// absent marks the files (bit 0 speed, 1 width, 2.. AER) the function
	// did not have at the last reading, where that holds while it exists:
	// in sysfs, a device's attribute files are fixed when it is added. Its
	// vendor file, anchor, is then read in their place; when that fails
	// (ENODEV: the device is gone) they are asked for again.
	absent uint8
	anchor kfile
	// The last link attribute texts and what they parsed to: a link's
	// speed and width seldom change, and are then not parsed again.
	speedText, widthText string
	gts                  float64
	speedErr             string
	lanes                int
	widthErr             string
}

// newPCIFuncs prepares the functions of WithPCIe, their files watched by
// w.
func newPCIFuncs(addrs []string, w *fileWatch) []pciFunc {
	out := make([]pciFunc, len(addrs))
	for i, raw := range addrs {
		a, err := pcie.ParseAddress(raw)
		if err != nil {
			out[i] = pciFunc{addr: raw, badErr: err.Error()}
			continue
		}
		dir := "/sys/bus/pci/devices/" + string(a)
		f := &out[i]
		*f = pciFunc{addr: string(a), dir: dir,
			speed:  kfile{path: dir + "/current_link_speed", once: true, w: w},
			width:  kfile{path: dir + "/current_link_width", once: true, w: w},
			anchor: kfile{path: dir + "/vendor", once: true, w: w}}
		for k, af := range aerFiles {
			f.aer[k] = kfile{path: dir + "/" + af.file, once: true, w: w}
		}
	}
	return out
}

// close closes its files.
func (f *pciFunc) close() {
	f.speed.close()
	f.width.close()
	f.anchor.close()
	for k := range f.aer {
		f.aer[k].close()
	}
}

// readPCIe reads every function of WithPCIe into r.pcie, in option order.
func (s *Sampler) readPCIe(r *reading) {
	r.pcie = r.pcie[:0]
	for i := range s.pci {
		r.pcie = append(r.pcie, s.pci[i].read(s.o.root, &s.fbuf))
	}
}

// parseSpeed parses current_link_speed's text b into f.gts (0 when
// Unknown: no link) or f.speedErr, when it changed since the last read.
func (f *pciFunc) parseSpeed(b []byte) {
	if string(b) == f.speedText && f.speedText != "" {
		return
	}
	f.speedText, f.speedErr = string(b), ""
	v, err := pcie.ParseSpeed(f.speedText)
	if err != nil && !errors.Is(err, pcie.ErrUnknownSpeed) {
		f.speedErr = "current_link_speed: " + err.Error()
	}
	f.gts = v
}

// parseWidth parses current_link_width's text b into f.lanes or
// f.widthErr, when it changed since the last read.
func (f *pciFunc) parseWidth(b []byte) {
	if string(b) == f.widthText && f.widthText != "" {
		return
	}
	f.widthText, f.widthErr = string(b), ""
	v, err := pcie.ParseWidth(f.widthText)
	if err != nil {
		f.widthErr = "current_link_width: " + err.Error()
	}
	f.lanes = v
}

// read reads the current link speed and width of the function and the
// totals of its AER statistics files. Files that are absent leave their
// values unset (a conventional PCI function has no link files; one without
// the AER capability no AER files); a function that is gone, or files that
// cannot be read or parsed, are named in err. The files are read into
// *buf, reused.
func (f *pciFunc) read(root fsroot.Root, buf *[]byte) pciRead {
	if f.badErr != "" {
		return pciRead{addr: f.addr, err: f.badErr}
	}
	out := pciRead{addr: f.addr}
	if f.absent != 0 {
		var err error
		if *buf, err = f.anchor.read(root, *buf, maxSysfsFile); err != nil {
			f.absent = 0 // gone or replaced: ask for every file again
			f.anchor.close()
		}
	}
	var errs []string
	newlyAbsent := uint8(0)
	attr := func(k *kfile, bit uint8, name string) ([]byte, error) {
		if f.absent&bit != 0 {
			return nil, errAbsent
		}
		var err error
		if *buf, err = k.read(root, *buf, maxSysfsFile); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, name+": "+err.Error())
			} else {
				newlyAbsent |= bit
			}
			return nil, err
		}
		return bytes.TrimSpace(*buf), nil
	}
	defer func() {
		if newlyAbsent != 0 {
			f.markAbsent(root, buf, newlyAbsent)
		}
	}()
	// Whether the function is there at all is asked only when its first
	// file is not (a stat less per function and reading).
	b, err := attr(&f.speed, 1, "current_link_speed")
	if errors.Is(err, fs.ErrNotExist) && f.absent&1 == 0 && !root.Exists(f.dir) {
		newlyAbsent = 0
		out.err = fmt.Errorf("%w: %s", pcie.ErrNotFound, f.addr).Error()
		return out
	}
	if err == nil {
		f.parseSpeed(b)
		if f.speedErr != "" {
			errs = append(errs, f.speedErr)
		}
		out.gts = f.gts
	}
	if b, err := attr(&f.width, 2, "current_link_width"); err == nil {
		f.parseWidth(b)
		if f.widthErr != "" {
			errs = append(errs, f.widthErr)
		}
		out.width = f.lanes
	}
	for i, af := range aerFiles {
		if _, err := attr(&f.aer[i], 4<<i, af.file); err != nil {
			continue
		}
		v, ok, err := pcie.AERTotal(*buf, af.total)
		if err != nil {
			errs = append(errs, af.file+": "+err.Error())
			continue
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: %v: no %s line", af.file, pcie.ErrBadAER, af.total))
			continue
		}
		out.aer[i], out.hasAER[i] = v, true
	}
	if len(errs) > 0 {
		out.err = strings.Join(errs, "; ")
	}
	return out
}

// errAbsent stands for a file known absent (pciFunc.absent).
var errAbsent = fmt.Errorf("absent: %w", fs.ErrNotExist)

// markAbsent records the files of bits as absent when the function's
// anchor is on sysfs, and holds the anchor open.
func (f *pciFunc) markAbsent(root fsroot.Root, buf *[]byte, bits uint8) {
	if f.anchor.f == nil {
		var err error
		if *buf, err = f.anchor.read(root, *buf, maxSysfsFile); err != nil {
			return
		}
	}
	if f.anchor.kernel {
		f.absent |= bits
	} else {
		f.anchor.close()
	}
}

// pcieStates returns each function's link at reading b and its AER errors
// between a and b: nil unless both readings have the count; a count that
// went down (the function was removed and added again) counts from 0.
func pcieStates(a, b []pciRead) []PCIeState { return new(Sampler).pcieStates(a, b, nil) }

// pcieStates is the package function writing into out's storage, whose
// AER pointers it reuses (see NextInto).
func (s *Sampler) pcieStates(a, b []pciRead, out []PCIeState) []PCIeState {
	old := out[:cap(out)]
	out = out[:0]
	for i, cur := range b {
		var spare PCIeState
		if i < len(old) {
			spare = old[i]
		}
		st := PCIeState{Address: cur.addr, GTs: cur.gts, Width: cur.width, Error: cur.err}
		if i < len(a) && a[i].addr == cur.addr {
			d := [3]**uint64{&st.AERCorrectable, &st.AERNonFatal, &st.AERFatal}
			p := [3]*uint64{spare.AERCorrectable, spare.AERNonFatal, spare.AERFatal}
			for k := range d {
				if a[i].hasAER[k] && cur.hasAER[k] {
					*d[k] = s.putU(p[k], delta64(a[i].aer[k], cur.aer[k]))
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// PCIeSummary is one PCI function of WithPCIe over a window: its link at
// the start and the end, the lowest and highest speed and width it had, and
// the AER errors it logged. Link values come from the samples that could
// read it; 0 is a link that was down or a function without link files.
type PCIeSummary struct {
	Address    string  `json:"address"`
	StartGTs   float64 `json:"start_gts"`
	StartWidth int     `json:"start_width"`
	MinGTs     float64 `json:"min_gts"`
	MinWidth   int     `json:"min_width"`
	MaxGTs     float64 `json:"max_gts"`
	MaxWidth   int     `json:"max_width"`
	EndGTs     float64 `json:"end_gts"`
	EndWidth   int     `json:"end_width"`
	// AERCorrectable, AERNonFatal and AERFatal total the samples' AER
	// errors; nil when no sample had the count.
	AERCorrectable *uint64 `json:"aer_correctable,omitempty"`
	AERNonFatal    *uint64 `json:"aer_nonfatal,omitempty"`
	AERFatal       *uint64 `json:"aer_fatal,omitempty"`
	// ReadSamples counts the samples that read the function's link (its
	// speed and width; an AER file may still have failed).
	ReadSamples int `json:"read_samples"`
	// Error is the last error a sample had, when one had.
	Error string `json:"error,omitempty"`
}

// SummarizePCIe folds the samples' PCIe states per address (see
// PCIeFolder).
func SummarizePCIe(samples []Sample) []PCIeSummary {
	var f PCIeFolder
	for i := range samples {
		f.Add(samples[i].PCIe)
	}
	return f.Summary()
}

// PCIeFolder folds the PCIe states of samples, one sample at a time, per
// address, in the order the addresses first appear (the order of
// WithPCIe): the link's first, lowest, highest and last speed and width
// over the samples that read it, and the AER errors in all. Summarizer
// uses it, and so does the monitor's run verdict (run.link_changed,
// run.aer_errors). The zero PCIeFolder is ready.
type PCIeFolder struct {
	out []PCIeSummary
}

// Add folds one sample's states in.
func (f *PCIeFolder) Add(states []PCIeState) {
	for _, st := range states {
		i := slices.IndexFunc(f.out, func(p PCIeSummary) bool { return p.Address == st.Address })
		if i < 0 {
			i = len(f.out)
			f.out = append(f.out, PCIeSummary{Address: st.Address})
		}
		f.out[i].add(&st)
	}
}

// Summary returns the summaries so far.
func (f *PCIeFolder) Summary() []PCIeSummary {
	out := slices.Clone(f.out)
	for i := range out {
		p := &out[i]
		for _, q := range []**uint64{&p.AERCorrectable, &p.AERNonFatal, &p.AERFatal} {
			if *q != nil {
				v := **q
				*q = &v
			}
		}
	}
	return out
}

func (p *PCIeSummary) add(st *PCIeState) {
	add := func(sum **uint64, d *uint64) {
		if d != nil {
			if *sum == nil {
				*sum = new(uint64)
			}
			**sum += *d
		}
	}
	add(&p.AERCorrectable, st.AERCorrectable)
	add(&p.AERNonFatal, st.AERNonFatal)
	add(&p.AERFatal, st.AERFatal)
	if st.Error != "" {
		p.Error = st.Error
	}
	if st.GTs <= 0 || st.Width <= 0 {
		return // the link was not read (an AER file alone may have failed)
	}
	if p.ReadSamples == 0 {
		p.StartGTs, p.StartWidth = st.GTs, st.Width
		p.MinGTs, p.MinWidth, p.MaxGTs, p.MaxWidth = st.GTs, st.Width, st.GTs, st.Width
	}
	p.ReadSamples++
	p.MinGTs, p.MaxGTs = min(p.MinGTs, st.GTs), max(p.MaxGTs, st.GTs)
	p.MinWidth, p.MaxWidth = min(p.MinWidth, st.Width), max(p.MaxWidth, st.Width)
	p.EndGTs, p.EndWidth = st.GTs, st.Width
}
