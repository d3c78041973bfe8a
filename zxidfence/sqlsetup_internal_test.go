package zxidfence

import (
	"errors"
	"fmt"
	"testing"
)

// sqlStateError is an error with a SQLSTATE, as pgx's and lib/pq's are.
type sqlStateError string

func (e sqlStateError) Error() string    { return "sqlstate " + string(e) }
func (e sqlStateError) SQLState() string { return string(e) }

// TestDuplicateObjectCodes: the answers a creator racing CreateTable can
// cause are run again; every other error is final. 42710 is the one a CI
// run met ('type "setup_42" already exists' beside a creator without the
// lock).
func TestDuplicateObjectCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{sqlStateError("23505"), true},
		{sqlStateError("42P07"), true},
		{fmt.Errorf("create: %w", sqlStateError("42710")), true},
		{sqlStateError("42501"), false}, // insufficient_privilege
		{sqlStateError("08006"), false}, // connection_failure
		{errors.New("no sqlstate"), false},
	} {
		if got := duplicateObject(tc.err); got != tc.want {
			t.Errorf("duplicateObject(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
