// Package zkelect_test checks the repository's documentation: every relative
// link in every Markdown file points to a file that exists and, when it names
// an anchor, to a heading of that file (GitHub's heading slugs).
package zkelect_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestMarkdownLinksResolve walks the module for *.md files and checks each
// inline link ([text](target)) outside code: an absolute URL (scheme:) is
// skipped, a relative path must name an existing file or directory inside
// the module, and a #fragment must be the slug of a heading in the target
// Markdown file (or in the linking file, for a bare #fragment).
func TestMarkdownLinksResolve(t *testing.T) {
	files, err := markdownFiles(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d Markdown files under the module root, want README.md and its sub-READMEs", len(files))
	}
	links := 0
	for _, f := range files {
		doc, err := readMarkdown(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.links {
			links++
			if err := checkLink(f, l.target); err != nil {
				t.Errorf("%s:%d: link %q: %v", f, l.line, l.target, err)
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found: the parser is broken or README.md links nowhere")
	}
}

// TestHeadingSlug pins the slug rule the anchor check relies on to GitHub's.
func TestHeadingSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Securing access to ZooKeeper: TLS, SASL, ACLs":           "securing-access-to-zookeeper-tls-sasl-acls",
		"`zkelect dev`: a local ensemble":                         "zkelect-dev-a-local-ensemble",
		"`zkelect bench`, `zkelect fence`, `zkelect version`":     "zkelect-bench-zkelect-fence-zkelect-version",
		"Choosing the session timeout, handoff timeout and grace": "choosing-the-session-timeout-handoff-timeout-and-grace",
		"docker-compose and Grafana":                              "docker-compose-and-grafana",
		"recipe: one leader per election":                         "recipe-one-leader-per-election",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// markdownFiles lists the *.md files under root, skipping hidden directories
// (.git) and testdata.
func markdownFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// link is one inline link of a Markdown file: its target and 1-based line.
type link struct {
	target string
	line   int
}

// markdown is what the check needs of a Markdown file: its links outside
// code and its headings' slugs.
type markdown struct {
	links []link
	slugs map[string]bool
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// readMarkdown parses path: links outside fenced and indented code blocks and
// inline code spans, and the slugs of its ATX headings (GitHub numbers
// repeated headings -1, -2, …).
func readMarkdown(path string) (markdown, error) {
	f, err := os.Open(path)
	if err != nil {
		return markdown{}, err
	}
	defer f.Close()
	doc, fenced, seen := markdown{slugs: map[string]bool{}}, false, map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			s := slug(m[1])
			if k := seen[s]; k > 0 {
				doc.slugs[fmt.Sprintf("%s-%d", s, k)] = true
			} else {
				doc.slugs[s] = true
			}
			seen[s]++
		}
		for _, m := range inlineLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			if !strings.Contains(m[1], ":") { // skip https:, mailto:
				doc.links = append(doc.links, link{target: m[1], line: n})
			}
		}
	}
	return doc, sc.Err()
}

// checkLink resolves target relative to the Markdown file from and checks
// that the file exists inside the module and holds the anchor, if any.
func checkLink(from, target string) error {
	file, anchor, _ := strings.Cut(target, "#")
	path := from
	if file != "" {
		path = filepath.Join(filepath.Dir(from), filepath.FromSlash(file))
		if rel, err := filepath.Rel(".", path); err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("points outside the module (%s)", path)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("no such file: %s", path)
	}
	if anchor == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(path, ".md") {
		return fmt.Errorf("anchor #%s on %s, which is not a Markdown file", anchor, path)
	}
	doc, err := readMarkdown(path)
	if err != nil {
		return err
	}
	if !doc.slugs[anchor] {
		return fmt.Errorf("%s has no heading with anchor #%s", path, anchor)
	}
	return nil
}

// slug is GitHub's anchor for a heading: lower case, inline code marks and
// punctuation other than - and _ dropped, spaces turned into hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
