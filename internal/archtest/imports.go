package archtest

import (
	"fmt"
	"slices"
	"strings"
)

// Rule names, as every violation names its rule.
const (
	RuleImports    = "import rules"
	RuleModules    = "modules"
	RuleCore       = "core never imports a driver"
	RuleClock      = "no wall clock in the core"
	RuleRandom     = "no global randomness in the core"
	RuleGoroutines = "no goroutines in the core"
	RuleDocGo      = "doc.go and its file map"
	RuleIssues     = "no issue numbers"
)

// Core is the packages that hold the model and the contract. They never
// import a driver or anything built over one, never read the wall clock,
// never start goroutines and never use a random source that no seed
// controls, so a run is a function of its inputs.
var Core = []string{"hwmodel", "policies", "sim"}

// NotForCore is what the core may never import: the drivers, and the
// packages that stand on them or on results.
var NotForCore = []string{"cmd/brigade", "fill", "live", "plan", "policies/policytest", "report", "results", "runner", "serving", "sweep"}

// Violation is one broken rule, located in a file.
type Violation struct {
	File string // slash-separated, relative to the module root
	Line int
	Rule string
	Msg  string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s:%d: %s [%s]", v.File, v.Line, v.Msg, v.Rule)
}

// CheckImports holds the module's non-test files to the rules: every
// package has a row and every row a package; a row may allow only
// packages of rows above it (so the allowed graph is a layered DAG, its
// rows in layer order); the core's rows allow nothing of NotForCore; and
// every import of a module package, or of a module outside the standard
// library, is one the tables allow. Test files may import anything: an
// external test package cannot make a cycle, and tests need fakes and
// fixtures from other layers.
func CheckImports(m *Module, r *Rules) []Violation {
	var out []Violation
	row := map[string]int{} // directory -> row index
	for i, p := range r.Packages {
		if _, dup := row[p.Dir]; dup {
			out = append(out, Violation{r.Doc, p.Line, RuleImports, fmt.Sprintf("package %s has a second row", p.Dir)})
			continue
		}
		row[p.Dir] = i
		if m.Package(p.Dir) == nil {
			out = append(out, Violation{r.Doc, p.Line, RuleImports, fmt.Sprintf("package %s does not exist", p.Dir)})
		}
	}
	for _, p := range r.Packages {
		for _, dep := range p.MayImport {
			j, ok := row[dep]
			switch {
			case !ok:
				out = append(out, Violation{r.Doc, p.Line, RuleImports, fmt.Sprintf("%s may import %s, which has no row", p.Dir, dep)})
			case j >= row[p.Dir]:
				out = append(out, Violation{r.Doc, p.Line, RuleImports,
					fmt.Sprintf("%s may import %s, which is not above it: rows go lowest layer first, so that the rules form a layered DAG", p.Dir, dep)})
			}
			if slices.Contains(Core, p.Dir) && slices.Contains(NotForCore, dep) {
				out = append(out, Violation{r.Doc, p.Line, RuleCore, fmt.Sprintf("%s may import %s; the core must not", p.Dir, dep)})
			}
		}
	}
	for _, mr := range r.Modules {
		for _, dir := range mr.ImportedBy {
			if _, ok := row[dir]; !ok {
				out = append(out, Violation{r.Doc, mr.Line, RuleModules, fmt.Sprintf("module %s is allowed to %s, which has no row in the packages table", mr.Path, dir)})
			}
		}
	}
	used := map[string]bool{}         // module paths some non-test file imports
	importers := map[[2]string]bool{} // (module path, package dir) pairs
	for _, pkg := range m.Packages {
		rule := r.Package(pkg.Dir)
		if rule == nil {
			if first := firstFile(pkg); first != "" {
				out = append(out, Violation{first, 1, RuleImports,
					fmt.Sprintf("package %s has no row in %s's packages table; add one saying what it owns and may import", pkg.Dir, r.Doc)})
			}
			continue
		}
		for _, f := range pkg.Files {
			if f.Test {
				continue
			}
			for _, imp := range m.Imports(f) {
				if dir, ok := m.Internal(imp.Path); ok {
					if !slices.Contains(rule.MayImport, dir) {
						out = append(out, Violation{f.Name, imp.Line, RuleImports,
							fmt.Sprintf("%s imports %s; %s allows it only %s", pkg.Dir, dir, r.Doc, list(rule.MayImport))})
					}
					continue
				}
				if Standard(imp.Path) {
					continue
				}
				mr := r.Module(imp.Path)
				if mr == nil {
					out = append(out, Violation{f.Name, imp.Line, RuleModules,
						fmt.Sprintf("imports %s, from a module that %s's modules table does not list", imp.Path, r.Doc)})
					continue
				}
				used[mr.Path] = true
				importers[[2]string{mr.Path, pkg.Dir}] = true
				if !slices.Contains(mr.ImportedBy, pkg.Dir) {
					out = append(out, Violation{f.Name, imp.Line, RuleModules,
						fmt.Sprintf("%s imports %s; %s allows module %s only to %s", pkg.Dir, imp.Path, r.Doc, mr.Path, list(mr.ImportedBy))})
				}
			}
		}
	}
	// The modules table states a fact, who imports what, so a package it
	// names that no longer imports the module is an error too.
	for _, mr := range r.Modules {
		if !used[mr.Path] {
			out = append(out, Violation{r.Doc, mr.Line, RuleModules, fmt.Sprintf("module %s is imported by no package's non-test files; remove its row", mr.Path)})
			continue
		}
		for _, dir := range mr.ImportedBy {
			if _, ok := row[dir]; ok && !importers[[2]string{mr.Path, dir}] {
				out = append(out, Violation{r.Doc, mr.Line, RuleModules, fmt.Sprintf("module %s is listed as imported by %s, whose non-test files do not import it", mr.Path, dir)})
			}
		}
	}
	return out
}

func firstFile(p *Package) string {
	for _, f := range p.Files {
		if !f.Test {
			return f.Name
		}
	}
	return "" // a package of tests alone imports nothing that ships
}

func list(dirs []string) string {
	if len(dirs) == 0 {
		return "nothing of the module's"
	}
	return strings.Join(dirs, ", ")
}
