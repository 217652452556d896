package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/snapshot"
)

// listen returns the listeners the flags name, as exporter-toolkit's
// web.ListenAndServe would open them (TCP, or vsock://:PORT), or the
// sockets systemd passed with --web.systemd-socket; the caller wraps them
// in the connection cap, which ListenAndServe has no place for.
func listen(f *web.FlagConfig) ([]net.Listener, error) {
	if *f.WebSystemdSocket {
		passed, err := activation.Listeners()
		if err != nil {
			return nil, fmt.Errorf("--web.systemd-socket: %w", err)
		}
		var lns []net.Listener
		for _, ln := range passed {
			if ln != nil {
				lns = append(lns, ln)
			}
		}
		if len(lns) == 0 {
			return nil, errors.New("--web.systemd-socket: systemd passed no listening socket (start it from a .socket unit)")
		}
		return lns, nil
	}
	var lns []net.Listener
	for _, addr := range *f.WebListenAddresses {
		ln, err := listenOne(addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

func listenOne(addr string) (net.Listener, error) {
	if !strings.HasPrefix(addr, "vsock://") {
		return net.Listen("tcp", addr)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("--web.listen-address %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(u.Port(), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("--web.listen-address %s: want vsock://:PORT", addr)
	}
	return vsock.Listen(uint32(port), nil)
}

// openRoot returns the directory to read: "/" for the live host, else the
// snapshot at p (a directory, or a .tar.gz unpacked into a temporary one
// that closeRoot removes).
func openRoot(ctx context.Context, p string) (root string, closeRoot func(), err error) {
	if p == "" {
		return "/", func() {}, nil
	}
	s, err := snapshot.Open(ctx, p)
	if err != nil {
		return "", nil, fmt.Errorf("--root: %w", err)
	}
	if err := fsroot.Check(s.Dir); errors.Is(err, fsroot.ErrNotRoot) {
		s.Close()
		return "", nil, fmt.Errorf("--root %s: not a snapshot: it holds neither sys/ nor proc/ (write one with 'nicdiag snapshot -o FILE.tar.gz')", p)
	}
	return s.Dir, func() { s.Close() }, nil
}
