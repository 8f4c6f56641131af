// Package policies has no row in the table.
//
// # Files
//
//   - policy.go: Decide.
package policies
