package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// issueRef matches a reference to an issue or pull request by number: the
// word issue or ticket and a number (with or without "#"), PR, pull request
// or bug and "#" and a number, "#" and a number in parentheses, or fixes,
// closes, resolves or see and "#" and a number (testdata/issue-refs.txt
// has examples). A fault's name (a "#", a number and "@") or a colour is
// none.
var issueRef = regexp.MustCompile(`(?i)\b(?:issues?|tickets?)\s*#?\s*\d+\b|\b(?:pr|pull request|bug)\s*#\d+\b|\(#\d+\)|\b(?:fixes|fixed|closes|closed|resolves|resolved|see)\s+#\d+\b`)

// textExts are the files CheckTexts reads: what people read (docs,
// comments, scripts, configuration, notebooks).
var textExts = []string{".md", ".go", ".sh", ".bash", ".py", ".yaml", ".yml", ".json", ".ipynb", ".txt", ".toml", ".mjs", ".sbatch", ".tmpl", ".html"}

// IssueRefs returns the issue references in one line of text.
func IssueRefs(line string) []string { return issueRef.FindAllString(line, -1) }

// CheckTexts reads every text file under root (by extension, plus
// Dockerfiles and scripts with a #! line) except under .git, node_modules
// and the slash-separated directories in skip, and reports each line that
// names an issue or pull request by number: the repository speaks of the
// project alone, in its own words.
func CheckTexts(root string, skip ...string) ([]Violation, error) {
	var out []Violation
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" || slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !isText(rel, data) {
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, len(data)+1)
		for line := 1; sc.Scan(); line++ {
			for _, ref := range IssueRefs(sc.Text()) {
				out = append(out, Violation{rel, line, RuleIssues,
					fmt.Sprintf("names %q; say what is meant in the project's own words", ref)})
			}
		}
		return sc.Err()
	})
	return out, err
}

func isText(rel string, data []byte) bool {
	if bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	base := path.Base(rel)
	return slices.Contains(textExts, path.Ext(base)) || strings.HasPrefix(base, "Dockerfile") || bytes.HasPrefix(data, []byte("#!"))
}
