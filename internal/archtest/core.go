package archtest

import (
	"fmt"
	"go/ast"
	"path"
	"regexp"
	"slices"
)

// wallClock is what reads or waits on the wall clock in package time.
// time.Duration, time.ParseDuration and the other pure functions stay
// allowed: they do arithmetic on values handed in.
var wallClock = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"}

// seeded is what math/rand and math/rand/v2 offer besides the top-level
// functions that draw from the global source: constructors of a generator
// from a seed, and types. Anything else a file takes from those packages
// draws from the global source.
var seeded = []string{"New", "NewSource", "NewZipf", "NewPCG", "NewChaCha8", "Rand", "Source", "Source64", "Zipf", "PCG", "ChaCha8"}

// CheckCore holds the non-test files of the Core packages to their bans:
// no wall clock (time.Now, time.Since, timers, sleeps), no global random
// source (top-level math/rand and math/rand/v2 functions, crypto/rand),
// no go statements. A generator built with rand.New from a seed is fine.
func CheckCore(m *Module) []Violation {
	var out []Violation
	for _, dir := range Core {
		pkg := m.Package(dir)
		if pkg == nil {
			continue
		}
		for _, f := range pkg.Files {
			if !f.Test {
				out = append(out, checkCoreFile(m, f)...)
			}
		}
	}
	return out
}

var versionSuffix = regexp.MustCompile(`^v[0-9]+$`)

// localName is the name a file refers to an import by.
func localName(imp Import) string {
	if imp.Name != "" {
		return imp.Name
	}
	p := imp.Path
	if versionSuffix.MatchString(path.Base(p)) {
		p = path.Dir(p)
	}
	return path.Base(p)
}

func checkCoreFile(m *Module, f *File) []Violation {
	var out []Violation
	clock, random := map[string]bool{}, map[string]string{} // local names
	for _, imp := range m.Imports(f) {
		name := localName(imp)
		switch imp.Path {
		case "time":
			if name == "." {
				out = append(out, Violation{f.Name, imp.Line, RuleClock, `imports "time" with a dot, which hides its wall-clock reads from this check`})
			}
			clock[name] = true
		case "math/rand", "math/rand/v2":
			if name == "." {
				out = append(out, Violation{f.Name, imp.Line, RuleRandom, fmt.Sprintf("imports %q with a dot, which hides its global-source draws from this check", imp.Path)})
			}
			random[name] = imp.Path
		case "crypto/rand":
			out = append(out, Violation{f.Name, imp.Line, RuleRandom, `imports "crypto/rand", a random source no seed controls`})
		}
	}
	ast.Inspect(f.AST, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, Violation{f.Name, m.Line(n.Pos()), RuleGoroutines, "go statement starts a goroutine"})
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			// The parser resolves an identifier to its declaration (Obj)
			// only when it is declared in the file, so a local variable
			// that shadows a package name (rand := rand.New(...)) has
			// an Obj and is not the package.
			if !ok || id.Obj != nil {
				return true
			}
			sel := n.Sel.Name
			if clock[id.Name] && slices.Contains(wallClock, sel) {
				out = append(out, Violation{f.Name, m.Line(n.Pos()), RuleClock, fmt.Sprintf("time.%s depends on the wall clock", sel)})
			}
			if p, ok := random[id.Name]; ok && !slices.Contains(seeded, sel) {
				out = append(out, Violation{f.Name, m.Line(n.Pos()), RuleRandom, fmt.Sprintf("%s.%s (%s) draws from the global random source; use a *rand.Rand built from the run's seed", id.Name, sel, p)})
			}
		}
		return true
	})
	return out
}
