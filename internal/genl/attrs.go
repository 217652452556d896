package genl

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// typeMask drops NLA_F_NESTED and NLA_F_NET_BYTEORDER from an attribute's
// type.
const typeMask = 0x3fff

// Attrs calls f with the type (flags dropped) and value of each attribute
// in b, in order, and stops at f's first error. An attribute whose length
// runs past b, or trailing bytes too short for a header, is an error
// wrapping ErrMalformed.
func Attrs(b []byte, f func(typ uint16, v []byte) error) error {
	for len(b) > 0 {
		if len(b) < AttrHeaderLen {
			return fmt.Errorf("%w: %d trailing bytes, shorter than an attribute header", ErrMalformed, len(b))
		}
		n := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4]) & typeMask
		if n < AttrHeaderLen || n > len(b) {
			return fmt.Errorf("%w: attribute %d length %d with %d bytes left", ErrMalformed, typ, n, len(b))
		}
		if err := f(typ, b[AttrHeaderLen:n]); err != nil {
			return err
		}
		b = b[min((n+3)&^3, len(b)):] // NLA_ALIGN
	}
	return nil
}

// Malformed returns err so that errors.Is also matches it with target
// when it wraps ErrMalformed: a package whose callers test for its own
// malformed-input error passes that as target. Other errors are returned
// as they are.
func Malformed(err, target error) error {
	if err != nil && errors.Is(err, ErrMalformed) && !errors.Is(err, target) {
		return malformed{err, target}
	}
	return err
}

type malformed struct{ err, target error }

func (e malformed) Error() string        { return e.err.Error() }
func (e malformed) Unwrap() error        { return e.err }
func (e malformed) Is(target error) bool { return target == e.target }
