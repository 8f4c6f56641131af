package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// jsonValue is a decoded JSON value that keeps the order of an object's
// keys as the file has them: run.json is written in a deliberate order
// (schema version, Brigade's version, seed, command, inputs, files), and
// the page reads best in it.
type jsonValue struct {
	kind   byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	text   string
	keys   []string
	fields []jsonValue // an object's values, in keys order; an array's items
}

// decodeJSON reads one JSON value from b, keeping object key order.
func decodeJSON(b []byte) (jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return v, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, errors.New("want one JSON value, found more after it")
	}
	return v, nil
}

// maxDepth bounds nesting, so a hostile run.json cannot exhaust the stack.
const maxDepth = 64

func decodeValue(dec *json.Decoder, depth int) (jsonValue, error) {
	if depth > maxDepth {
		return jsonValue{}, fmt.Errorf("want at most %d levels of nesting", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return jsonValue{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			v := jsonValue{kind: 'o'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return v, err
				}
				f, err := decodeValue(dec, depth+1)
				if err != nil {
					return v, err
				}
				v.keys = append(v.keys, k.(string))
				v.fields = append(v.fields, f)
			}
			_, err := dec.Token() // '}'
			return v, err
		}
		v := jsonValue{kind: 'a'}
		for dec.More() {
			f, err := decodeValue(dec, depth+1)
			if err != nil {
				return v, err
			}
			v.fields = append(v.fields, f)
		}
		_, err := dec.Token() // ']'
		return v, err
	case string:
		return jsonValue{kind: 's', text: t}, nil
	case json.Number:
		return jsonValue{kind: 'n', text: t.String()}, nil
	case bool:
		if t {
			return jsonValue{kind: 'b', text: "yes"}, nil
		}
		return jsonValue{kind: 'b', text: "no"}, nil
	}
	return jsonValue{kind: 'z', text: "–"}, nil
}

// readRunJSON reads dir/run.json and renders it as HTML (renderRunInfo);
// a missing file gives "" and no error.
func readRunJSON(dir string) (template.HTML, error) {
	path := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	v, err := decodeJSON(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if v.kind != 'o' {
		return "", fmt.Errorf("%s: want a JSON object, found %s", path, kindName(v.kind))
	}
	return renderRunInfo(v), nil
}

func kindName(k byte) string {
	return map[byte]string{'a': "an array", 's': "a string", 'n': "a number", 'b': "a boolean", 'z': "null"}[k]
}

// renderRunInfo writes run.json as a definition list, whatever its schema:
// each key a term, a scalar as text, the command line as one shell line, a
// list of scalars comma-separated, a list of objects (the inputs, live
// mode's GPUs) as a table with a column per key, an object as a nested
// list.
func renderRunInfo(v jsonValue) template.HTML {
	var b strings.Builder
	writeObject(&b, v, "run")
	return template.HTML(b.String()) // #nosec: every text is escaped below
}

func writeObject(b *strings.Builder, v jsonValue, class string) {
	fmt.Fprintf(b, `<dl class="%s">`, class)
	for i, k := range v.keys {
		b.WriteString("<dt>")
		b.WriteString(template.HTMLEscapeString(k))
		b.WriteString("</dt><dd>")
		f := v.fields[i]
		if k == "command" && f.kind == 'a' && allScalar(f) {
			b.WriteString("<code>")
			b.WriteString(template.HTMLEscapeString(shellLine(f)))
			b.WriteString("</code>")
		} else {
			writeValue(b, f)
		}
		b.WriteString("</dd>\n")
	}
	b.WriteString("</dl>")
}

func writeValue(b *strings.Builder, v jsonValue) {
	switch v.kind {
	case 'o':
		if len(v.keys) == 0 {
			b.WriteString("–")
			return
		}
		writeObject(b, v, "nested")
	case 'a':
		switch {
		case len(v.fields) == 0:
			b.WriteString("none")
		case allScalar(v):
			for i, f := range v.fields {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(template.HTMLEscapeString(scalarText(f)))
			}
		case allObjects(v):
			writeRecords(b, v)
		default:
			b.WriteString("<ol>")
			for _, f := range v.fields {
				b.WriteString("<li>")
				writeValue(b, f)
				b.WriteString("</li>")
			}
			b.WriteString("</ol>")
		}
	default:
		b.WriteString(template.HTMLEscapeString(scalarText(v)))
	}
}

// writeRecords writes a list of objects as a table: one column per key,
// in order of first appearance, one row per object.
func writeRecords(b *strings.Builder, v jsonValue) {
	var cols []string
	seen := map[string]bool{}
	for _, f := range v.fields {
		for _, k := range f.keys {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	b.WriteString(`<table class="records"><thead><tr>`)
	for _, c := range cols {
		b.WriteString("<th>" + template.HTMLEscapeString(c) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>\n")
	for _, f := range v.fields {
		b.WriteString("<tr>")
		for _, c := range cols {
			b.WriteString("<td>")
			found := false
			for i, k := range f.keys {
				if k == c {
					writeValue(b, f.fields[i])
					found = true
					break
				}
			}
			if !found {
				b.WriteString("–")
			}
			b.WriteString("</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>")
}

func allScalar(v jsonValue) bool {
	for _, f := range v.fields {
		if f.kind == 'o' || f.kind == 'a' {
			return false
		}
	}
	return true
}

func allObjects(v jsonValue) bool {
	for _, f := range v.fields {
		if f.kind != 'o' {
			return false
		}
	}
	return true
}

func scalarText(v jsonValue) string {
	if v.kind == 's' && v.text == "" {
		return "–"
	}
	return v.text
}

// shellLine joins a command line's words as a POSIX shell would read them
// back: a word with anything but letters, digits and -_./=:,+@% is
// single-quoted.
func shellLine(v jsonValue) string {
	words := make([]string, len(v.fields))
	for i, f := range v.fields {
		words[i] = shellQuote(f.text)
	}
	return strings.Join(words, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
