//go:build !linux

package nicinfo

import (
	"context"
	"errors"
	"fmt"
)

// LiveEthtool returns a source that has no answers: SIOCETHTOOL exists only
// on Linux. The options are accepted and ignored.
func LiveEthtool(opts ...EthtoolOption) EthtoolSource { return noEthtool{} }

type noEthtool struct{}

func (noEthtool) Answers(ctx context.Context, iface string) (*EthtoolAnswers, error) {
	return nil, wrapErr(fmt.Errorf("ethtool: only on Linux: %w", errors.ErrUnsupported))
}
