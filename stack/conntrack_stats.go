package stack

// ConntrackStats sums /proc/net/stat/nf_conntrack, b, over CPUs by column
// name, for the columns stack keeps: found, invalid, insert,
// insert_failed, drop, early_drop (those the kernel printed). A table the
// kernel did not write is a *ParseError. nicinfo reads the table's
// counters since boot through it: one parser of the file.
func ConntrackStats(b []byte) (map[string]uint64, error) {
	s, err := parseConntrackStat(b)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(ctNames))
	for name, i := range ctNames {
		out[name] = s[i]
	}
	return out, nil
}
