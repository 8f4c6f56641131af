// Package pollux reproduces the Tiresias runs of the Pollux (OSDI'21)
// artifact (petuum/adaptdl, branch osdi21-artifact, simulator/) job by
// job through Brigade's engine.
package pollux
