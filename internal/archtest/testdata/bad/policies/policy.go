package policies

// Decide decides nothing.
func Decide() {}
