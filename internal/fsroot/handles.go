package fsroot

import (
	"runtime"
	"sync"
	"weak"
)

// handles maps a snapshot directory to the handle its Roots share, so
// that New for a directory already open (each NIC's PCIe link read, each
// queue map) reuses its descriptor instead of opening one more that only
// the garbage collector would close. Entries are weak: a handle no Root
// holds is closed and dropped as before.
var handles struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[handle]
}

// sharedHandle returns the live handle for dir when it still names the
// directory it opened (one renamed away or replaced at the same path is
// not reused), else a new one.
func sharedHandle(dir string) *handle {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	if wp, ok := handles.m[dir]; ok {
		if h := wp.Value(); h != nil && h.names(dir) {
			return h
		}
	}
	h := new(handle)
	wp := weak.Make(h)
	if handles.m == nil {
		handles.m = map[string]weak.Pointer[handle]{}
	}
	handles.m[dir] = wp
	runtime.AddCleanup(h, dropHandle, handleKey{dir, wp})
	return h
}

type handleKey struct {
	dir string
	wp  weak.Pointer[handle]
}

// dropHandle forgets a collected handle, unless a newer one took its place.
func dropHandle(k handleKey) {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	if handles.m[k.dir] == k.wp {
		delete(handles.m, k.dir)
	}
}
