package irq

import "slices"

// threadSums are the watched threads' interval-weighted sums, by TID, at
// most maxWatched of them.
type threadSums map[int]*threadSum

type threadSum struct {
	r    ThreadRate // the latest; UserPct and SystemPct hold sums
	secs float64
}

// add folds one sample's threads in.
func (m *threadSums) add(ts []ThreadRate, w float64) {
	if len(ts) == 0 {
		return
	}
	if *m == nil {
		*m = threadSums{}
	}
	for _, t := range ts {
		a := (*m)[t.TID]
		if a == nil {
			m.evict()
			a = &threadSum{}
			(*m)[t.TID] = a
		}
		u, s := a.r.UserPct, a.r.SystemPct
		a.r = t
		a.r.UserPct, a.r.SystemPct = u+t.UserPct*w, s+t.SystemPct*w
		a.secs += w
	}
}

// evict makes room for one more thread: at maxWatched, the one with the
// least busy time goes (the lowest TID of equals).
func (m threadSums) evict() {
	if len(m) < maxWatched {
		return
	}
	least, leastBusy := -1, 0.0
	for tid, a := range m {
		b := a.r.UserPct + a.r.SystemPct
		if least < 0 || b < leastBusy || b == leastBusy && tid < least {
			least, leastBusy = tid, b
		}
	}
	delete(m, least)
}

// means returns each thread's rates averaged over the samples it appeared
// in, busiest first.
func (m threadSums) means() []ThreadRate {
	out := make([]ThreadRate, 0, len(m))
	for _, a := range m {
		if a.secs <= 0 {
			continue
		}
		r := a.r
		r.UserPct /= a.secs
		r.SystemPct /= a.secs
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y ThreadRate) int {
		switch bx, by := x.BusyPct(), y.BusyPct(); {
		case bx > by:
			return -1
		case bx < by:
			return 1
		}
		return x.TID - y.TID
	})
	if len(out) == 0 {
		return nil
	}
	return out
}
