// Package csvlimittest holds what the tests of every CSV reader share to
// show that it keeps to csvlimit's bounds: lines over them, written without
// holding them in memory, the errors they must give, and the check that a
// reader refused one at its line having allocated a few MiB at most.
//
// # Files
//
//   - csvlimittest.go: OverLimit, OverLimits and HeaderOverLimit, Line, WriteLine,
//     Allocated and Refused.
package csvlimittest
