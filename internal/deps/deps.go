package deps

import (
	_ "github.com/go-zookeeper/zk"
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/rs/zerolog"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "modernc.org/sqlite"
)
