// Package csvlimit bounds what encoding/csv may buffer when it reads a
// file a user handed in. csv.Reader holds a whole record in memory, plus a
// string header per field, so a small .csv.gz that expands to one enormous
// line of commas would exhaust the machine's memory before any reader saw
// a record to refuse. NewReader puts a limiter between the input and the
// parser that fails first, at the record's line, with a *LimitError that
// each reader turns into its own located error.
//
// # Invariants
//
//   - A record (one line, or several when a quoted cell holds line
//     breaks) longer than MaxLineBytes bytes, or with more than MaxFields
//     fields, is an error; so is a comment line longer than MaxLineBytes.
//     The check runs on the bytes before the parser buffers them, so
//     reading any input takes memory in proportion to MaxLineBytes, not to
//     the input.
//   - The limiter never refuses what it should pass: input within the
//     limits reads exactly as a plain csv.Reader reads it, records and
//     errors alike. It follows CSV's quoting (a '"' toggles quoting, so a
//     doubled "" inside quotes toggles twice; a line break or a comma
//     counts only outside quotes) and skips comment lines as the parser
//     does, quotes and commas in them included. A bare quote in an
//     unquoted cell, which it would misread, is a syntax error the parser
//     meets first, on that line. A fuzz test holds it to this.
//   - The records before the one over a limit are read as usual: the
//     limiter hands over the bytes that came before the offending one, and
//     the parser meets the error when it asks for more. The error is
//     sticky: every later read returns it.
//   - LimitError.Line is the 1-based line where the offending record
//     starts, as csv.Reader numbers lines.
//
// The limiter reads the input as csv.NewReader's defaults do: a comma
// separates fields and quotes are strict. A caller may set FieldsPerRecord,
// ReuseRecord and TrimLeadingSpace on the reader NewReader returns, but
// must leave Comma, Comment and LazyQuotes as they are.
//
// Records reads what NewReader's reader reads (with FieldsPerRecord -1 and
// ReuseRecord) faster where it can: a line without quotes, within 64 KiB
// and MaxFields, is split at its commas directly, and from the first line
// that is not plain to the end of the input the records come from
// NewReader's reader, their lines and errors counted from the input's
// first line. Records, lines and errors are the same as NewReader's on
// every input; a differential test and a fuzz target hold it to that.
//
// # Files
//
//   - limiter.go: MaxLineBytes, MaxFields, LimitError, NewReader and the
//     limiter it wraps the input in.
//   - records.go: Records, the plain-line fast path and its hand-over.
package csvlimit
