package bench

import "context"

func (e *env) runHerd(ctx context.Context, cfg Config, rep *Report) error     { return nil }
func (e *env) runShards(ctx context.Context, cfg Config, rep *Report) error   { return nil }
