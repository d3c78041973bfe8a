package partition

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/recipe"
)

// The admin plane lives in package partition/operator. These names keep
// working for one release so that code written against earlier releases
// compiles unchanged; they are the same types, values and functions.

// ErrRefused reports an operator change that cannot hold; nothing was
// written (operator.ErrRefused).
var ErrRefused = operator.ErrRefused

// Operator changes the operator state of one root (see operator.Operator).
//
// Deprecated: use operator.Operator; this alias is kept for one release.
type Operator = operator.Operator

// NewOperator returns the Operator of root on sess (see operator.New).
//
// Deprecated: use operator.New; this wrapper is kept for one release.
func NewOperator(sess *recipe.Session, root string, acl []zk.ACL) (*Operator, error) {
	return operator.New(sess, root, acl)
}

// Prune deletes the elections of shards no member runs (see
// operator.Prune).
//
// Deprecated: use operator.Prune; this wrapper is kept for one release.
func Prune(ctx context.Context, sess *recipe.Session, root string, shards []string, dryRun bool) (deleted, kept []string, err error) {
	return operator.Prune(ctx, sess, root, shards, dryRun)
}
