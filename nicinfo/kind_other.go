//go:build !linux

package nicinfo

import "errors"

type linkFacts struct {
	kind   string
	vfs    []VFConfig
	xdp    *XDP
	tunnel *Tunnel
}

func linkInfo() (map[string]linkFacts, error) {
	return nil, errors.New("netlink: only on Linux")
}
