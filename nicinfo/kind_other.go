//go:build !linux

package nicinfo

import "errors"

func linkKinds() (map[string]string, error) {
	return nil, errors.New("netlink: only on Linux")
}
