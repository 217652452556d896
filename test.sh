#!/usr/bin/env bash
# Runs every test: vet, unit and snapshot tests (with the race detector), the
# real-kernel tests (veth in throwaway namespaces; they skip without root), a
# short fuzz pass over every fuzz target, the iperf3 run-verdict tests alone
# (they measure CPU saturation), and the QEMU lab when NICDIAG_LAB=1.
#   FUZZTIME=30s ./test.sh      fuzz longer (default 4s per target; 0 skips;
#                               FUZZFLOOR: the inputs a target must run)
#   ./fuzz.sh --release         the release fuzzing: 10 minutes in all, the
#                               corpus kept under testdata/fuzz
set -euo pipefail
cd "$(dirname "$0")"

go vet ./...
# The lab boots its guests below, once; here its tests skip.
NICDIAG_LAB= go test -count=1 -race ./...

fuzztime=${FUZZTIME:-4s}
if [ "$fuzztime" != 0 ]; then
	./fuzz.sh "$fuzztime"
fi

# Tests that measure CPU saturation run alone, on a quiet machine.
NICDIAG_ALONE=1 go test -count=1 -v -run 'TestRunVerdictIperf3' ./cmd/nicdiag/

if [ "${NICDIAG_LAB:-0}" = 1 ]; then
	NICDIAG_LAB=1 go test -count=1 -v -timeout 40m ./internal/lab/
fi
