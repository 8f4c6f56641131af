// Package live is the fixture's driver; its doc.go is in order.
//
// # Files
//
//   - live.go: Drive.
package live
