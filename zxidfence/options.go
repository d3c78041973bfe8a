package zxidfence

import (
	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
)

// DefaultTable is the SQL guard's table name unless WithTable says otherwise.
const DefaultTable = "zxidfence"

// Option configures a guard. Options that concern one kind of guard say so
// and are ignored by the others.
type Option func(*config)

type config struct {
	metrics *Metrics
	logger  zerolog.Logger
	table   string
	acl     []zk.ACL
	maxKeys int
}

func newConfig(opts []Option) config {
	c := config{
		logger: zerolog.Nop(),
		table:  DefaultTable,
		acl:    zk.WorldACL(zk.PermAll),
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithMetrics counts the guard's accepted and rejected writes in m (see
// NewMetrics). Several guards may share one Metrics. Without it nothing is
// counted.
func WithMetrics(m *Metrics) Option { return func(c *config) { c.metrics = m } }

// WithLogger logs the guard's generation changes (at warn level) and
// rejections (at info level) to l. The default discards logs.
func WithLogger(l zerolog.Logger) Option { return func(c *config) { c.logger = l } }

// WithTable sets the SQL guard's table (default DefaultTable). The name must
// be a plain identifier: letters, digits and underscores, not starting with a
// digit; NewSQL rejects anything else. SQL guards only.
func WithTable(name string) Option { return func(c *config) { c.table = name } }

// WithACL sets the ACL of target znodes the ZooKeeper guard creates (default
// world:anyone with all permissions). ZooKeeper guards only.
func WithACL(acl []zk.ACL) Option { return func(c *config) { c.acl = acl } }

// WithMaxKeys bounds the number of keys a Memory guard holds to n: a write
// (or AcceptGeneration) for a new key beyond n fails with an error wrapping
// ErrTooManyKeys, while keys already held keep working. n <= 0, the
// default, means no bound. Memory guards only.
func WithMaxKeys(n int) Option { return func(c *config) { c.maxKeys = n } }
