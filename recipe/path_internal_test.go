package recipe

import "testing"

// TestPathErrorSaysWhoRefused: the one PathError the recipe and the
// connection layer share names the package the caller called, and does
// not say ZooKeeper refuses a path that only the recipe refuses as an
// election path ("/", the /zookeeper tree), nor the other way round.
func TestPathErrorSaysWhoRefused(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/", `recipe: invalid path "/": the root cannot be an election path`},
		{"/zookeeper/x", `recipe: invalid path "/zookeeper/x": the /zookeeper tree is reserved by ZooKeeper`},
		{"/a//b", `recipe: invalid path "/a//b": `},
	} {
		err := validatePath(c.path)
		if err == nil || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want {
			t.Errorf("validatePath(%q) = %v, want an error starting %q", c.path, err, c.want)
		}
	}
	if got, want := ErrInvalidPath.Error(), "recipe: invalid path"; got != want {
		t.Errorf("ErrInvalidPath = %q, want %q", got, want)
	}
}
