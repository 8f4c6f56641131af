// Package hwmodel is the fixture's model. Its map below forgets clock.go
// and names a file that was removed.
//
// # Files
//
//   - doc.go: this comment.
//   - gpu.go: a file that no longer exists.
package hwmodel
