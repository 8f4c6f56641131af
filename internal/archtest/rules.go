package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Rules are the import rules as docs/architecture.md writes them: its
// packages table (a "package" and a "may import" column, one row per
// package, lowest layer first) and its modules table (a "module" and an
// "imported by" column). The document is the one statement of the rules;
// the checks read them from it, so the text and the test cannot disagree.
type Rules struct {
	Doc      string // the document, relative to the module root
	Packages []PackageRule
	Modules  []ModuleRule
}

// PackageRule is one row of the packages table.
type PackageRule struct {
	Dir       string   // the package's directory, e.g. "cmd/brigade"
	MayImport []string // directories of the module's packages it may import
	Line      int
}

// ModuleRule is one row of the modules table.
type ModuleRule struct {
	Path       string   // a module path, e.g. "gonum.org/v1/plot"
	ImportedBy []string // directories of the packages whose non-test files may import it
	Line       int
}

// Package returns the rule for the package in dir, or nil.
func (r *Rules) Package(dir string) *PackageRule {
	for i := range r.Packages {
		if r.Packages[i].Dir == dir {
			return &r.Packages[i]
		}
	}
	return nil
}

// Module returns the rule of the module that provides importPath (the
// longest module path that is importPath or a prefix of it at a slash),
// or nil.
func (r *Rules) Module(importPath string) *ModuleRule {
	var best *ModuleRule
	for i := range r.Modules {
		m := &r.Modules[i]
		if importPath == m.Path || strings.HasPrefix(importPath, m.Path+"/") {
			if best == nil || len(m.Path) > len(best.Path) {
				best = m
			}
		}
	}
	return best
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// ReadRules reads the two tables from the document doc (a path relative
// to root). A malformed row is a violation at its line, not an error: the
// rest of the table still applies.
func ReadRules(root, doc string) (*Rules, []Violation, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
	if err != nil {
		return nil, nil, err
	}
	r := &Rules{Doc: doc}
	var bad []Violation
	pkgs := findTable(data, "package", "may import")
	if pkgs == nil {
		return nil, nil, fmt.Errorf("%s: no table with a %q and a %q column", doc, "package", "may import")
	}
	for _, row := range pkgs.rows {
		names := codeSpan.FindAllStringSubmatch(row.cells[pkgs.key], -1)
		if len(names) != 1 {
			bad = append(bad, Violation{File: doc, Line: row.line, Rule: RuleImports,
				Msg: fmt.Sprintf("the package cell must name one package in backquotes, found %q", strings.TrimSpace(row.cells[pkgs.key]))})
			continue
		}
		r.Packages = append(r.Packages, PackageRule{Dir: names[0][1], MayImport: spans(row.cells[pkgs.value]), Line: row.line})
	}
	mods := findTable(data, "module", "imported by")
	if mods == nil {
		return nil, nil, fmt.Errorf("%s: no table with a %q and an %q column", doc, "module", "imported by")
	}
	for _, row := range mods.rows {
		names := codeSpan.FindAllStringSubmatch(row.cells[mods.key], -1)
		if len(names) != 1 {
			bad = append(bad, Violation{File: doc, Line: row.line, Rule: RuleModules,
				Msg: fmt.Sprintf("the module cell must name one module in backquotes, found %q", strings.TrimSpace(row.cells[mods.key]))})
			continue
		}
		r.Modules = append(r.Modules, ModuleRule{Path: names[0][1], ImportedBy: spans(row.cells[mods.value]), Line: row.line})
	}
	return r, bad, nil
}

func spans(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

type table struct {
	key, value int // column indexes
	rows       []tableRow
}

type tableRow struct {
	cells []string
	line  int
}

// findTable returns the first Markdown table whose header has a column
// named key (first) and one named value, compared case-insensitively.
func findTable(data []byte, key, value string) *table {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var t *table
	header := false // the previous line was t's header
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		isRow := strings.HasPrefix(text, "|")
		switch {
		case t != nil && header:
			header = false // the delimiter row
		case t != nil && isRow:
			cells := splitRow(text)
			if len(cells) > max(t.key, t.value) {
				t.rows = append(t.rows, tableRow{cells: cells, line: line})
			}
		case t != nil:
			return t
		case isRow:
			cells := splitRow(text)
			k, v := -1, -1
			for i, c := range cells {
				switch strings.ToLower(strings.TrimSpace(c)) {
				case key:
					if k < 0 {
						k = i
					}
				case value:
					v = i
				}
			}
			if k >= 0 && v >= 0 {
				t, header = &table{key: k, value: v}, true
			}
		}
	}
	return t
}

// splitRow splits a Markdown table row on its unescaped pipes.
func splitRow(row string) []string {
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var cells []string
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, b.String())
			b.Reset()
		default:
			b.WriteByte(row[i])
		}
	}
	return append(cells, b.String())
}
