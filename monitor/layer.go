package monitor

import (
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// A layer is one part of the host the run verdict weighs, in a file of its
// own (layer_*.go): what it sums of each sample of the run's span, and
// what it offers the verdict from those sums. Window keeps a layer's sums
// over the span's interior, its samples between the first and the last
// that moved traffic (see span): add weighs a sample in, merge adds the
// sums of another of the same kind (a stretch of samples that turned out
// to be inside the span). A layer that reads nothing of the samples (the
// Ethernet line rate, a USB bus) sums nothing.
//
// A new layer is a type that implements it and an entry in spanLayers.
type layer interface {
	add(x *irq.Sample, dt float64)
	merge(o layer)
	// offer adds the layer's ceilings (and losses) to v, from its sums.
	offer(j *judgement, v *Verdict)
	// findings are the layer's findings once v is decided: its bound,
	// limit and losses.
	findings(j *judgement, v *Verdict) []finding.Finding
}

// spanLayers returns empty sums of every layer, in the order they offer
// their ceilings.
func spanLayers() []layer {
	return []layer{new(trafficLayer), ethernetLayer{}, newPCIeLayer(), usbLayer{}, newCPULayer(), newCommandLayer(), cardLayer{}, new(queueLayer)}
}

// judgement is what the layers judge the run by: the limits, the span's
// sums (traffic and the interior's), and what the whole run counted.
type judgement struct {
	limits []Limits
	lim    map[string]Limits
	// traffic is the NICs' means over the span, edges trimmed (see
	// span.traffic).
	traffic *trafficLayer
	layers  []layer // the interior's
	cpu     *cpuLayer
	command *commandLayer
	pcie    *pcieLayer
	queues  *queueLayer
	losses  *lossLayer        // every sample's
	pcieRun []irq.PCIeSummary // every sample's
	// stack is this host's stack over the run; nil where it was not read.
	stack *stack.Summary
}

// nothingJudged is the part of layer a layer without findings embeds; nothing that of a layer that sums nothing.
type (
	nothingJudged struct{}
	nothing       struct{ nothingJudged }
)

func (nothing) add(*irq.Sample, float64)                              {}
func (nothing) merge(layer)                                           {}
func (nothingJudged) findings(*judgement, *Verdict) []finding.Finding { return nil }
