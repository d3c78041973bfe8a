package znode

import (
	"errors"
	"testing"
)

func TestCheckPathFollowsPathUtils(t *testing.T) {
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"/", true}, {"/a/b", true}, {"/zookeeper/config", true}, {"/é", true},
		{"", false}, {"a", false}, {"/a/", false}, {"/a//b", false},
		{"/a/./b", false}, {"/..", false}, {"/a\x00", false}, {"/a\u0085", false},
		{"/\ue000", false}, {"/\ufff0", false}, {"/\U0001F600", false},
	} {
		err := CheckPath(c.path)
		var pe *PathError
		switch {
		case c.ok && err != nil:
			t.Errorf("CheckPath(%q) = %v, want nil", c.path, err)
		case !c.ok && (!errors.Is(err, ErrInvalidPath) || !errors.As(err, &pe) || pe.Reason == ""):
			t.Errorf("CheckPath(%q) = %v, want a *PathError with a reason", c.path, err)
		}
	}
}
