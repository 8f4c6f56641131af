// Package policytest checks drivers and policies against the policy
// contract (package policies), in the manner of testing/fstest: one suite
// that every implementation runs.
//
// TestDriver runs a driver, through a small adapter the driver's tests
// write (a Driver func), over standard scenarios under built-in policies
// and under test policies that preempt (Preemptor) and that issue
// decisions every driver must reject (Adversary). TestPolicy runs a policy
// spec on Reference, the smallest complete driver, over random scenarios.
// Both wrap the policy in a Checker, which checks at every call that the
// driver answered each decision once, kept the queue, the running set,
// the tenant books and the cluster in agreement, and dropped the previous
// call's reservations; and that the policy started only queued jobs, on
// placements it reserved.
//
// Invariants: the suites read no wall clock and draw randomness only from
// their seeds, so a deterministic driver gives the same decision log on
// every run, which TestDriver and TestPolicy check.
//
// # Files
//
//   - checker.go: Checker, the contract checked call by call.
//   - reference.go: Scenario, Job, Outcome and Reference, the reference driver.
//   - suite.go: TestDriver, TestPolicy, the scenarios, Preemptor and Adversary.
package policytest
