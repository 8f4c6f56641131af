// Package config is the one strict decoder of the YAML (and JSON) files
// Brigade reads: cluster specs (hwmodel), sweep grids (sweep), live job
// files (live) and serving experiment files (serving), and the priority
// keys of a slurm.conf (ReadSlurmConf). It reads one
// document into Go types and reports every problem at once, each as
// "file:line: field: what was expected", for example
//
//	cluster.yaml:12: nodes[2].gpus: want a whole number, got "eight"
//	cluster.yaml:14: nodes[3].cpus: unknown field (known fields: name, gpu_model, gpus, rack, cpu_milli, memory_mib, cache_gb, mig); did you mean "cpu_milli"?
//
// # Decoding
//
// Decode reads into a pointer to a struct by its Go type. A struct field
// is the key its json tag names (a file is YAML or JSON with the same
// names); a config tag adds "required" and "max=N" (a list of at most N
// entries). Strings must be strings: a number, a boolean or a plain word
// YAML 1.1 reads as a boolean (yes, no, on, off, y, n) is refused and
// should be quoted. A bool takes true and false and those words. An
// integer takes whole numbers (8, 8.0, 1e3, 0x10, 1_000) within its type's
// range; a float any finite number. A null value leaves the field as it
// was, as if it were absent. ParseDocuments reads a stream of documents
// (a Kubernetes manifest file) as one list of their roots, and
// Value.Field lets a type look at one key (a kind) before it decodes the
// rest. A type that is written in more than one shape
// (a string or a list, a duration) implements Unmarshaler and reads its
// Value itself. Anchors, aliases and merge keys ("<<") work; a merged key
// that is also written out is a key given twice.
//
// # Invariants
//
//   - Every problem is found in one pass: unknown fields (with the known
//     fields and the likeliest one meant, by Suggest and EditDistance, the
//     repository's one edit distance), keys given twice, missing required
//     fields, wrong types and out-of-range numbers, then what the type's
//     Check finds. Errors.Err lists them in line order, at most
//     MaxReported, then "and N more problems".
//   - One place says what a valid value is: the type's Check method
//     (Checker), which Decode calls once the value is read and a value
//     built in Go calls through Validate. Check reports by field path;
//     the line comes from the document when there is one.
//   - A value that could not be read stays at its zero value, and Check
//     problems at, above or below its path are dropped, so one mistake is
//     reported once and not again as the zero value's consequences.
//   - No input panics or exhausts memory: files over MaxFileBytes are
//     refused, aliases are followed a bounded number of times, and the
//     nodes visited are bounded by the document's size. Problems are
//     reported in a deterministic order.
//
// # Files
//
//   - errors.go: Error, Errors (the problems of one file, viewed at a
//     field path), lines of field paths.
//   - decode.go: Decode, Parse, Value, Checker, Unmarshaler, Validate,
//     ReadFile; the reflective decoder and its scalar rules.
//   - suggest.go: Suggest and EditDistance, the did-you-mean hints.
//   - syntax.go: the line and message of a YAML syntax error.
//   - slurm.go: ReadSlurmConf, the priority keys of a slurm.conf
//     (SlurmPriority), the one file Brigade reads that is not YAML: its
//     problems are reported the same way, all at once as file:line: KEY.
package config
