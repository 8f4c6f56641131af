package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxReported is how many problems one error lists; the rest are counted
// in a last line, "and N more problems".
const MaxReported = 10

// maxKept bounds the problems held for sorting, so that a file with a
// million bad entries costs no more than one with ten thousand.
const maxKept = 10_000

// Error is one problem with a config file: the file (or another name for
// the source, such as `preset "x"`), the line (0: unknown or the whole
// file), the field path such as "nodes[2].gpus" (empty for the whole
// file) and what was expected.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error formats the problem as "file:line: field: msg", leaving out the
// parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors collects the problems of one file. It is a view at one field
// path: In and Index return views below it that share the same list, so
// a type's Check reports under its own path without knowing where it sits
// in the file. The zero value is not usable; see NewErrors.
type Errors struct {
	r    *report
	path string
}

type report struct {
	file  string
	root  *yaml.Node // the document, for the lines of fields a Check names
	list  []*Error
	total int // every problem reported, including those not kept
	// failed are the paths whose value could not be read (a wrong type, a
	// missing required field): a Check problem at such a path, above it
	// or below it is a consequence of the zero value left there and is
	// dropped.
	failed []string
}

// NewErrors returns an empty list of problems for file, which names the
// source in every message ("" for values built in Go).
func NewErrors(file string) *Errors {
	return &Errors{r: &report{file: file}}
}

// Fresh returns an empty list for the same file and document, at the
// whole file: for problems found after the file was read (the files it
// names, a cluster it must fit), with the lines of the fields they name.
func (e *Errors) Fresh() *Errors {
	return &Errors{r: &report{file: e.r.file, root: e.r.root}}
}

// File is the name the problems carry.
func (e *Errors) File() string { return e.r.file }

// Path is the field path of this view ("" for the whole file).
func (e *Errors) Path() string { return e.path }

// In returns the view at field below this one: a name ("gpus"), an index
// ("[2]") or a path of them ("nodes[2].gpus").
func (e *Errors) In(field string) *Errors {
	return &Errors{r: e.r, path: Join(e.path, field)}
}

// Index returns the view at list entry i of field, e.g. Index("nodes", 2)
// for "nodes[2]".
func (e *Errors) Index(field string, i int) *Errors {
	return e.In(field + "[" + strconv.Itoa(i) + "]")
}

// Add reports a problem with field (relative to this view; "" for the
// view's own value). Its line is the line the field was read from, or
// that of the nearest enclosing field the file has. A problem at, above
// or below a field whose value could not be read is not reported: it is
// a consequence of that problem.
func (e *Errors) Add(field, format string, args ...any) {
	path := Join(e.path, field)
	for _, f := range e.r.failed {
		if related(f, path) {
			return
		}
	}
	e.r.add(lineOf(e.r.root, path), path, fmt.Sprintf(format, args...))
}

// Count is the number of problems reported so far at or below this
// view's path: a Check that derives one thing from many (names from
// counts, totals from sizes) looks at it to skip what would only repeat
// its parts' problems.
func (e *Errors) Count() int {
	if e.path == "" {
		return e.r.total
	}
	n := 0
	for _, p := range e.r.list {
		if within(e.path, p.Field) {
			n++
		}
	}
	return n
}

// Err returns nil when nothing was reported. Otherwise it returns the
// problems in line order (those of the whole file first), at most
// MaxReported of them and then a line counting the rest: one *Error, or
// several joined with errors.Join.
func (e *Errors) Err() error {
	r := e.r
	if r.total == 0 {
		return nil
	}
	list := slices.Clone(r.list)
	slices.SortStableFunc(list, func(a, b *Error) int { return a.Line - b.Line })
	list = list[:min(len(list), MaxReported)]
	errs := make([]error, len(list), len(list)+1)
	for i, p := range list {
		errs[i] = p
	}
	if more := r.total - len(list); more > 0 {
		noun := "problems"
		if more == 1 {
			noun = "problem"
		}
		errs = append(errs, &Error{File: r.file, Msg: fmt.Sprintf("and %d more %s", more, noun)})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

func (r *report) add(line int, path, msg string) {
	r.addf(line, path, "%s", msg)
}

// addf formats the message only when the problem is kept. Problems with
// the whole file are always kept: there are few, and they explain the
// rest.
func (r *report) addf(line int, path, format string, args ...any) {
	r.total++
	if len(r.list) < maxKept || path == "" {
		r.list = append(r.list, &Error{File: r.file, Line: line, Field: path, Msg: fmt.Sprintf(format, args...)})
	}
}

// fail reports that the value at path could not be read.
func (r *report) fail(line int, path, msg string) {
	r.add(line, path, msg)
	r.failed = append(r.failed, path)
}

// Join appends field to a field path: "a" + "b" is "a.b", "a" + "[1]" is
// "a[1]".
func Join(path, field string) string {
	switch {
	case field == "":
		return path
	case path == "":
		return field
	case field[0] == '[':
		return path + field
	}
	return path + "." + field
}

// related reports whether one path is the other or lies below it.
func related(a, b string) bool {
	return within(a, b) || within(b, a)
}

// within reports whether path lies at or below top.
func within(top, path string) bool {
	if top == "" || top == path {
		return true
	}
	return strings.HasPrefix(path, top) && (path[len(top)] == '.' || path[len(top)] == '[')
}

// maxFind bounds the mappings one line lookup searches.
const maxFind = 10_000

// lineOf finds the line of the field at path in the document: the line
// of its key (or list entry), or of the nearest enclosing one present.
func lineOf(root *yaml.Node, path string) int {
	n := resolve(root)
	if n == nil {
		return 0
	}
	line := n.Line
	// Past an alias, fields are written at its anchor, but the value is
	// the alias's: its line is the one to name.
	aliased := false
	for rest := path; rest != "" && !aliased; {
		var seg string
		index := -1
		if rest[0] == '[' {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				break
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil {
				break
			}
			index, rest = i, rest[end+1:]
		} else {
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			seg, rest = rest[:end], rest[end:]
		}
		rest = strings.TrimPrefix(rest, ".")
		switch {
		case index >= 0 && n.Kind == yaml.SequenceNode && index < len(n.Content):
			line = n.Content[index].Line
			aliased = n.Content[index].Kind == yaml.AliasNode
			n = resolve(n.Content[index])
			if n == nil {
				return line
			}
			continue
		case index < 0 && n.Kind == yaml.MappingNode:
			budget := maxFind
			k, v := findKey(n, seg, &budget)
			if k == nil {
				return line
			}
			line = k.Line
			aliased = v.Kind == yaml.AliasNode
			n = resolve(v)
			if n == nil {
				return line
			}
			continue
		default:
			return line
		}
	}
	return line
}

// findKey returns the key and value of name in mapping n, looking into
// merged mappings ("<<: *anchor") too.
// budget bounds the mappings searched, which merges of merges multiply.
func findKey(n *yaml.Node, name string, budget *int) (*yaml.Node, *yaml.Node) {
	if *budget--; *budget < 0 {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			continue
		}
		if k.Value == name && !isMerge(k) {
			return k, n.Content[i+1]
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolve(n.Content[i]); k != nil && isMerge(k) {
			for _, m := range mergeSources(n.Content[i+1]) {
				if k, v := findKey(m, name, budget); k != nil {
					return k, v
				}
			}
		}
	}
	return nil, nil
}
