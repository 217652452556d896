package nicinfo

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/internal/genl"
	"golang.org/x/sys/unix"
)

// ETHTOOL_A_MODULE_EEPROM_* and ETHTOOL_A_FEC_HEADER of
// include/uapi/linux/ethtool_netlink.h.
const (
	ethtoolAFECHeader           = 1
	ethtoolAModuleEEPROMHeader  = 1
	ethtoolAModuleEEPROMOffset  = 2 // u32
	ethtoolAModuleEEPROMLength  = 3 // u32
	ethtoolAModuleEEPROMPage    = 4 // u8
	ethtoolAModuleEEPROMBank    = 5 // u8
	ethtoolAModuleEEPROMI2CAddr = 6 // u8
	ethtoolAModuleEEPROMData    = 7 // binary
)

// checkReads asks what only the checks want, as they want the driver's
// statistics (KeepStats): the FEC counters, the module EEPROM pages and
// the driver's loss counters. An inventory (list) asks none of them.
func (l *liveEthtool) checkReads(iface string, a *EthtoolAnswers, fail func(key string, err error)) {
	if f, err := l.fec(iface); err != nil {
		fail("fec", err)
	} else {
		a.FEC = f
	}
	if m, err := l.module(iface); err != nil {
		fail("module_eeprom", err)
	} else {
		a.Module = m
	}
	// A driver without statistics (lo) has no loss counters: no error.
	if m, err := l.et.Stats(iface); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		fail("loss_stats", err)
	} else {
		a.LossStats = keepStats(m, l.keep)
	}
}

// fec asks ETHTOOL_MSG_FEC_GET with statistics. A driver without FEC
// (EOPNOTSUPP) or a kernel without the family has none: no error.
func (l *liveEthtool) fec(iface string) (*FEC, error) {
	p, err := l.nl.get(unix.ETHTOOL_MSG_FEC_GET, unix.ETHTOOL_MSG_FEC_GET_REPLY, ethtoolAFECHeader, iface, unix.ETHTOOL_FLAG_STATS, nil)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || err != nil && l.nl.conn == nil:
		return nil, nil
	case err != nil:
		return nil, err
	}
	return parseFECAttrs(p[genl.GenlHeaderLen:])
}

// modulePage reads 128 bytes of a module's EEPROM.
func (l *liveEthtool) modulePage(iface string, i2c, page, bank uint8, offset uint16) (ModulePage, error) {
	p, err := l.nl.get(unix.ETHTOOL_MSG_MODULE_EEPROM_GET, unix.ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY, ethtoolAModuleEEPROMHeader, iface, 0,
		func(m *genl.Msg) {
			m.U32(ethtoolAModuleEEPROMOffset, uint32(offset))
			m.U32(ethtoolAModuleEEPROMLength, 128)
			m.U8(ethtoolAModuleEEPROMPage, page)
			m.U8(ethtoolAModuleEEPROMBank, bank)
			m.U8(ethtoolAModuleEEPROMI2CAddr, i2c)
		})
	if err != nil {
		return ModulePage{}, err
	}
	mp := ModulePage{I2C: i2c, Page: page, Bank: bank, Offset: offset}
	err = genl.Attrs(p[genl.GenlHeaderLen:], func(typ uint16, v []byte) error {
		if typ == ethtoolAModuleEEPROMData {
			mp.Data = append([]byte(nil), v...)
		}
		return nil
	})
	if err == nil && len(mp.Data) != 128 {
		err = fmt.Errorf("%w: module EEPROM page %02xh read %d bytes", ErrMalformed, page, len(mp.Data))
	}
	return mp, genl.Malformed(err, ErrMalformed)
}

// module reads the EEPROM pages that ParseModule decodes: the lower page
// 00h, then by its identifier an SFP's A2h, a QSFP's upper page 00h and
// page 03h, or a CMIS module's pages 02h and 11h (those a flat memory does
// not have are not asked). No module, or a driver without module access, is no pages and
// no error.
func (l *liveEthtool) module(iface string) ([]ModulePage, error) {
	lower, err := l.modulePage(iface, 0x50, 0, 0, 0)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EIO) || err != nil && l.nl.conn == nil:
		return nil, nil
	case err != nil:
		return nil, err
	}
	pages := []ModulePage{lower}
	type want struct {
		i2c, page uint8
		offset    uint16
	}
	var more []want
	id, flat := lower.Data[0], lower.Data[2]
	switch {
	case slices.Contains(sff8472IDs, id) && lower.Data[92]&0x40 != 0:
		more = []want{{0x51, 0, 0}}
	case slices.Contains(sff8636IDs, id) && flat&0x04 == 0:
		more = []want{{0x50, 0, 128}, {0x50, 3, 128}}
	case slices.Contains(sff8636IDs, id):
		more = []want{{0x50, 0, 128}}
	case slices.Contains(cmisIDs, id) && flat&0x80 == 0:
		more = []want{{0x50, 2, 128}, {0x50, 0x11, 128}}
	}
	for _, w := range more {
		p, err := l.modulePage(iface, w.i2c, w.page, 0, w.offset)
		if err != nil {
			return pages, fmt.Errorf("module EEPROM page %02xh: %w", w.page, err)
		}
		pages = append(pages, p)
	}
	return pages, nil
}
