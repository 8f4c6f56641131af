package archtest

import (
	"fmt"
	"go/doc/comment"
	"regexp"
	"slices"
	"strings"
)

// FilesHeading is the doc comment heading ("# Files") under which a
// package's doc.go maps its files.
const FilesHeading = "Files"

// goFile matches a bare file name ending in .go; a name that follows a
// slash is a path into another package or project and is not matched.
var goFile = regexp.MustCompile(`(?:^|[^\w./-])([\w-]+(?:\.[\w-]+)*\.go)\b`)

// CheckDocs holds every package with non-test files to its doc.go: the
// file exists and carries the package comment, no other file does, the
// comment has a "# Files" section that names every non-test .go file of
// the package (doc.go aside), and every bare .go file name anywhere in the
// comment is a file of the package. So a file added, renamed or removed
// without its map fails here.
func CheckDocs(m *Module) []Violation {
	var out []Violation
	for _, pkg := range m.Packages {
		first := firstFile(pkg)
		if first == "" {
			continue
		}
		var doc *File
		names := map[string]bool{}
		for _, f := range pkg.Files {
			names[f.Base()] = true
			if f.Base() == "doc.go" {
				doc = f
			} else if !f.Test && f.AST.Doc != nil {
				out = append(out, Violation{f.Name, m.Line(f.AST.Doc.Pos()), RuleDocGo,
					fmt.Sprintf("package comment outside doc.go; move it into %s/doc.go", pkg.Dir)})
			}
		}
		if doc == nil {
			out = append(out, Violation{first, 1, RuleDocGo, fmt.Sprintf("package %s has no doc.go", pkg.Dir)})
			continue
		}
		if doc.AST.Doc == nil {
			out = append(out, Violation{doc.Name, m.Line(doc.AST.Package), RuleDocGo, "doc.go has no package comment"})
			continue
		}
		raw := rawLines(m, doc)
		text := doc.AST.Doc.Text()
		for _, name := range bareGoFiles(text) {
			if !names[name] {
				out = append(out, Violation{doc.Name, raw.find(name), RuleDocGo,
					fmt.Sprintf("names %s, which is not a file of package %s", name, pkg.Dir)})
			}
		}
		section, ok := filesSection(text)
		if !ok {
			out = append(out, Violation{doc.Name, m.Line(doc.AST.Package), RuleDocGo,
				fmt.Sprintf("the package comment has no %q section mapping the package's files", "# "+FilesHeading)})
			continue
		}
		mapped := bareGoFiles(section)
		heading := raw.find("# " + FilesHeading)
		for _, f := range pkg.Files {
			if !f.Test && f.Base() != "doc.go" && !slices.Contains(mapped, f.Base()) {
				out = append(out, Violation{doc.Name, heading, RuleDocGo,
					fmt.Sprintf("the %q section does not name %s", "# "+FilesHeading, f.Base())})
			}
		}
	}
	return out
}

// bareGoFiles lists the distinct bare .go file names in text, in order.
func bareGoFiles(text string) []string {
	var out []string
	for _, m := range goFile.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// filesSection returns the text of the doc comment's "# Files" section:
// every block from that heading to the next heading.
func filesSection(text string) (string, bool) {
	var p comment.Parser
	var pr comment.Printer
	d := p.Parse(text)
	var b strings.Builder
	in, found := false, false
	for _, blk := range d.Content {
		if h, ok := blk.(*comment.Heading); ok {
			in = headingText(h) == FilesHeading
			found = found || in
			continue
		}
		if in {
			b.Write(pr.Text(&comment.Doc{Content: []comment.Block{blk}}))
		}
	}
	return b.String(), found
}

func headingText(h *comment.Heading) string {
	var b strings.Builder
	for _, t := range h.Text {
		if p, ok := t.(comment.Plain); ok {
			b.WriteString(string(p))
		}
	}
	return b.String()
}

type lines []string

func rawLines(m *Module, f *File) lines {
	// The comment's own text, line by line from the top of the file: a
	// doc.go's comment starts at line 1 or after a build constraint, so
	// lines are counted from the comment's first line.
	start := m.Line(f.AST.Doc.Pos())
	out := make(lines, start-1)
	for _, c := range f.AST.Doc.List {
		out = append(out, strings.Split(c.Text, "\n")...)
	}
	return out
}

// find returns the 1-based line of the first line holding s, or 1.
func (l lines) find(s string) int {
	for i, line := range l {
		if strings.Contains(line, s) {
			return i + 1
		}
	}
	return 1
}
