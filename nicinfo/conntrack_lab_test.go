package nicinfo

// statLab is filled in from the QEMU lab (see conntrack_test.go).
const statLab = statOld
