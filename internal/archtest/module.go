package archtest

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Module is a Go module's source as the checks see it: every package
// directory, with every .go file parsed whatever its build constraints, so
// that a file built only with cgo or only on Linux is held to the same
// rules as the rest.
type Module struct {
	Root     string // the directory holding go.mod
	Path     string // the module path from go.mod
	Fset     *token.FileSet
	Packages []*Package // in directory order
}

// Package is one directory of the module that holds .go files.
type Package struct {
	Dir        string // slash-separated, relative to the module root ("sim", "cmd/brigade")
	ImportPath string
	Files      []*File // in name order
}

// File is one parsed .go file.
type File struct {
	Name string // slash-separated path relative to the module root
	Test bool   // a _test.go file
	AST  *ast.File
}

// Base is the file's name without its directory.
func (f *File) Base() string { return path.Base(f.Name) }

// Load parses every package of the module rooted at root. Directories
// named testdata, directories whose names start with "." or "_", and
// nested modules (a directory with its own go.mod) are skipped, as the go
// command skips them.
func Load(root string) (*Module, error) {
	modPath, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	m := &Module{Root: root, Path: modPath, Fset: token.NewFileSet()}
	byDir := map[string]*Package{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		af, err := parser.ParseFile(m.Fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := path.Dir(rel)
		pkg := byDir[dir]
		if pkg == nil {
			ip := modPath
			if dir != "." {
				ip += "/" + dir
			}
			pkg = &Package{Dir: dir, ImportPath: ip}
			byDir[dir] = pkg
			m.Packages = append(m.Packages, pkg)
		}
		pkg.Files = append(pkg.Files, &File{Name: rel, Test: strings.HasSuffix(rel, "_test.go"), AST: af})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(m.Packages, func(a, b *Package) int { return strings.Compare(a.Dir, b.Dir) })
	for _, p := range m.Packages {
		slices.SortFunc(p.Files, func(a, b *File) int { return strings.Compare(a.Name, b.Name) })
	}
	return m, nil
}

// Package returns the package in directory dir, or nil.
func (m *Module) Package(dir string) *Package {
	for _, p := range m.Packages {
		if p.Dir == dir {
			return p
		}
	}
	return nil
}

// Line is the 1-based line of pos.
func (m *Module) Line(pos token.Pos) int { return m.Fset.Position(pos).Line }

// Imports is an import of a file: its path and where it is written.
type Import struct {
	Path string
	Name string // the local name it is given, "" when none
	Line int
}

// Imports lists f's imports in source order.
func (m *Module) Imports(f *File) []Import {
	out := make([]Import, 0, len(f.AST.Imports))
	for _, s := range f.AST.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			continue // the parser accepted it, so it is a valid literal
		}
		name := ""
		if s.Name != nil {
			name = s.Name.Name
		}
		out = append(out, Import{Path: p, Name: name, Line: m.Line(s.Pos())})
	}
	return out
}

// Internal reports whether an import path is one of the module's own
// packages, and returns its directory relative to the root.
func (m *Module) Internal(importPath string) (string, bool) {
	if importPath == m.Path {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(importPath, m.Path+"/"); ok {
		return rest, true
	}
	return "", false
}

// Standard reports whether an import path belongs to the standard library
// (or is cgo's "C"): its first element has no dot.
func Standard(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			p, err := strconv.Unquote(fields[1])
			if err != nil {
				p = fields[1]
			}
			return p, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", gomod, err)
	}
	return "", errors.New(gomod + ": no module line")
}
