// Package archtest holds Brigade to its architecture. Its test,
// architecture_test.go, runs Check on the repository and fails on any
// violation, each named by file:line and rule:
//
//   - the import rules: docs/architecture.md's packages table lists every
//     package, lowest layer first, with the packages it may import; a row
//     may allow only rows above it, so the rules form a layered DAG; the
//     non-test files of every package import only what their row allows,
//     and modules outside the standard library only where the modules
//     table allows them; that table's "imported by" column is a fact, so a
//     package it names must import the module. The document is the one statement of the rules:
//     the check reads the tables, so the text and the code cannot part.
//   - the core (hwmodel, policies, sim) never imports a driver or what
//     stands on one, and its non-test files never read the wall clock,
//     never use a random source that no seed controls (top-level
//     math/rand functions, crypto/rand), and never start goroutines.
//   - every package has a doc.go holding its package comment, whose
//     "# Files" section names each of its non-test files, and every bare
//     file name in that comment is a file of the package.
//   - no text (docs, comments, scripts, configuration) names an issue or
//     pull request by number.
//
// Invariants: the checks read source only (go/parser, go/doc/comment; no
// type checking, no build), so they see every file whatever its build
// constraints and take about a second; their output is sorted, so
// the same tree gives the same report. testdata/bad is a small module
// that breaks each rule; the test compares its report with
// testdata/bad.golden (go test ./internal/archtest -rewrite refreshes it),
// so each check is shown to fail when it should.
//
// # Files
//
//   - check.go: Check, every check on one module, sorted.
//   - module.go: Load, the module's packages and files parsed.
//   - rules.go: ReadRules, the two tables of docs/architecture.md.
//   - imports.go: CheckImports, Violation, the rule names, Core.
//   - core.go: CheckCore, the core's bans.
//   - docs.go: CheckDocs, each package's doc.go and its file map.
//   - text.go: CheckTexts and IssueRefs, issue numbers in texts.
//   - architecture_test.go: the repository and the fixture checked.
package archtest
