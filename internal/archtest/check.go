package archtest

import (
	"cmp"
	"slices"
)

// ArchitectureDoc is where a module states its rules, relative to its root.
const ArchitectureDoc = "docs/architecture.md"

// Check runs every check on the module rooted at root: the import and
// module rules of its architecture document, the core's bans, the doc.go
// maps, and issue references in its texts (skipping the slash-separated
// directories in skip). Violations come sorted by file, then line.
func Check(root string, skip ...string) ([]Violation, error) {
	m, err := Load(root)
	if err != nil {
		return nil, err
	}
	rules, out, err := ReadRules(root, ArchitectureDoc)
	if err != nil {
		return nil, err
	}
	out = append(out, CheckImports(m, rules)...)
	out = append(out, CheckCore(m)...)
	out = append(out, CheckDocs(m)...)
	texts, err := CheckTexts(root, skip...)
	if err != nil {
		return nil, err
	}
	out = append(out, texts...)
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return out, nil
}
