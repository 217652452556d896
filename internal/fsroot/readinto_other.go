//go:build !unix

package fsroot

import "io"

// readRegularInto is openRegular and a read to EOF; it stops once more
// than max bytes are in.
func readRegularInto(name string, buf []byte, max int) ([]byte, error) {
	f, err := openRegular(name)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	for len(buf) <= max {
		buf = grow(buf, max)
		n, err := f.Read(buf[len(buf):min(cap(buf), max+1)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
