package policies

// KueuePlain makes a kueue policy decide without its memo of failures
// and its cached head places, for tests that compare the two.
func KueuePlain(p Policy) { p.(*kueuePolicy).plain = true }
