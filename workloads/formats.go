package workloads

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Format is one trace format Brigade reads: its name (what --format and a
// grid's format take), what tells its files apart from the others' (the
// header columns of a CSV format, a test of the first line for another),
// and its reader.
type Format struct {
	Name string
	// Signature are header columns that only this format's files have:
	// a header holding all of them is this format's.
	Signature []string
	// Claims, for a format that is not CSV (its Signature is empty), tells
	// from a file's first line that is neither blank nor a '#' comment
	// whether the file is this format's; Looks says what it looks for, in
	// words, for errors. Claims must claim no CSV format's header.
	Claims func(line string) bool
	Looks  string
	// Read parses a whole file; file names it in errors and Job.Source.
	Read func(r io.Reader, file string) (*Workload, error)
}

// AutoFormat is the format name that asks ReadFile to tell the format from
// the file's header (DetectFormat).
const AutoFormat = "auto"

// formats is the one list of trace formats: adding a format is adding its
// entry here. Signatures must stay disjoint, and no Claims may claim a CSV
// header, so that no file is claimed by two formats.
var formats = []Format{
	{Name: "philly", Signature: []string{"timestamp", "num_gpus"}, Read: ReadPhilly},
	{Name: "openb", Signature: []string{"num_gpu", "gpu_milli"}, Read: ReadOpenB},
	{Name: "brigade", Signature: []string{"submit_s"}, Read: ReadBrigade},
	{Name: "pollux", Signature: []string{"application", "num_replicas"}, Read: ReadPollux},
	{Name: "swf", Claims: swfClaims, Looks: "';' header lines or records of 18 numbers", Read: ReadSWF},
}

// Formats lists the names of the trace formats ReadFile reads (not
// AutoFormat), in the order of the registry.
var Formats = FormatNames()

// FormatNames lists the registered formats' names.
func FormatNames() []string {
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = f.Name
	}
	return out
}

// LookupFormat returns the registered format called name.
func LookupFormat(name string) (Format, bool) {
	i := slices.IndexFunc(formats, func(f Format) bool { return f.Name == name })
	if i < 0 {
		return Format{}, false
	}
	return formats[i], true
}

// CheckFormat reports whether name is a registered format or AutoFormat,
// with an error that lists them when it is neither.
func CheckFormat(name string) error {
	if _, ok := LookupFormat(name); ok || name == AutoFormat {
		return nil
	}
	return fmt.Errorf("want %s, or %s to tell by the header; got %q", orList(FormatNames()), AutoFormat, name)
}

// orList writes "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// DetectFormat tells the format of the trace file at path from its header,
// the first line that is neither blank nor a '#' comment: the format whose
// Claims claims the line (SWF), else the CSV format whose Signature
// columns the header holds. A path ending in ".gz" is looked at
// decompressed. A header no format claims is a *ParseError naming the file,
// the header's line and what each format's header holds.
func DetectFormat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r, err := maybeGunzip(f, path)
	if err != nil {
		return "", err
	}
	return detect(r, path)
}

// maxHeaderBytes bounds the lines detect reads, so that a file of one
// endless line costs a bounded buffer and an error, not memory.
const maxHeaderBytes = 1 << 20

func detect(r io.Reader, file string) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxHeaderBytes)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		for _, f := range formats {
			if f.Claims != nil && f.Claims(text) {
				return f.Name, nil
			}
		}
		cols, err := csv.NewReader(strings.NewReader(text)).Read()
		if err != nil {
			return "", &ParseError{File: file, Line: line, Msg: fmt.Sprintf("want a CSV header naming the trace's columns: %v", err)}
		}
		for i := range cols {
			cols[i] = strings.ToLower(strings.TrimSpace(cols[i]))
		}
		for _, f := range formats {
			if len(f.Signature) > 0 && !slices.ContainsFunc(f.Signature, func(c string) bool { return !slices.Contains(cols, c) }) {
				return f.Name, nil
			}
		}
		var want []string
		for _, f := range formats {
			looks := f.Looks
			if f.Claims == nil {
				looks = strings.Join(f.Signature, " and ")
			}
			want = append(want, fmt.Sprintf("%s has %s", f.Name, looks))
		}
		return "", &ParseError{File: file, Line: line, Msg: fmt.Sprintf("cannot tell the trace format from the header %q (%s); name the format (%s)", shorten(text, 120), strings.Join(want, ", "), orList(FormatNames()))}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return "", &ParseError{File: file, Msg: fmt.Sprintf("want a CSV header line, found a line longer than %d bytes", maxHeaderBytes)}
		}
		return "", &ParseError{File: file, Msg: err.Error()}
	}
	return "", &ParseError{File: file, Line: 1, Msg: "want a header line naming the trace's columns, found an empty file"}
}

// shorten cuts s to at most n bytes for an error message.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
