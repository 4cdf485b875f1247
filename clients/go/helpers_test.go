package pbfleet

import "context"

type contextT = context.Context

func bg() context.Context { return context.Background() }
