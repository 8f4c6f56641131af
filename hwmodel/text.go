package hwmodel

import "strconv"

// Plural writes a count with its noun for people: "1 GPU", "2 GPUs",
// "0 jobs" (one is the singular, many the plural). Every message that
// counts something says it this way.
func Plural(n int, one, many string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + many
}
