package crashpoint

// The points the scheduler passes (package scheduler, doc.go "Restart
// safety", says why each is delicate).
const (
	// GangAnnotatedPartly: a gang's placement annotation is on some of
	// its members, not all, and nothing is bound.
	GangAnnotatedPartly = "gang-annotated-partly"
	// GangCommitted: the annotation is on every member, nothing is bound.
	GangCommitted = "committed"
	// GangBetweenBinds: one member of a gang is bound, another is not.
	GangBetweenBinds = "gang-between-binds"
	// BoundUnbooked: a Binding went through and the books do not know it.
	BoundUnbooked = "bound-unbooked"
	// Evicting: one pod of a preempted job has its Eviction, the next not.
	Evicting = "evicting"
	// Rebuilding: the books are half rebuilt from the API server's pods.
	Rebuilding = "rebuilding"
)

// Hook, when set, is called at each point with its name.
var Hook func(point string)

// At calls Hook, if set, with the point's name.
func At(point string) {
	if Hook != nil {
		Hook(point)
	}
}
