#!/usr/bin/env bash
# Runs every test: vet, unit and snapshot tests (with the race detector), the
# real-kernel tests (veth in throwaway namespaces; they skip without root), a
# short fuzz pass over every fuzz target, and the QEMU lab when NICDIAG_LAB=1.
#   FUZZTIME=30s ./test.sh      fuzz longer (default 4s per target; 0 skips)
set -euo pipefail
cd "$(dirname "$0")"

go vet ./...
# The lab boots its guests below, once; here its tests skip.
NICDIAG_LAB= go test -count=1 -race ./...

fuzztime=${FUZZTIME:-4s}
if [ "$fuzztime" != 0 ]; then
	for pkg in $(go list ./...); do
		for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
			echo "fuzz $pkg $target ($fuzztime)"
			go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >/tmp/nicdiag-fuzz.log 2>&1 ||
				{ cat /tmp/nicdiag-fuzz.log; exit 1; }
		done
	done
fi

if [ "${NICDIAG_LAB:-0}" = 1 ]; then
	NICDIAG_LAB=1 go test -count=1 -v -timeout 40m ./lab/
fi
