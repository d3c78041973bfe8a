package testenv

import (
	"context"
	"fmt"
)

// ReconfigLines sends one incremental reconfig request to a DynamicConfig
// cluster, as its superuser, with the member lines add as given
// ("server.<id>=<host>:<quorum port>:<election port>[:<role>];<client address>")
// and the server ids remove leaving: a test's way to make /zookeeper/config
// name members that are not its servers (observers that never run, at
// addresses the client cannot route to or at a wildcard). Members and
// Reconfig know nothing of such members. It returns ErrBadOptions without
// DynamicConfig, or the server's refusal.
func (c *Cluster) ReconfigLines(ctx context.Context, add []string, remove []string) error {
	if !c.opts.DynamicConfig {
		return fmt.Errorf("%w: ReconfigLines needs Options.DynamicConfig", ErrBadOptions)
	}
	if err := c.reconfig(ctx, add, remove); err != nil && !c.reconfiguredAnyway(ctx, err, add, remove) {
		return fmt.Errorf("reconfig (add %q, remove %q): %w", add, remove, err)
	}
	c.opts.Logf("testenv: reconfigured: added %q, removed %q", add, remove)
	return nil
}
