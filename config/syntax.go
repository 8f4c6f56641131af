package config

import (
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
)

// parserProblems are the YAML parser's messages (as against the
// scanner's). For them, the line the v2 reader gives counts from 0.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// syntaxError turns a YAML syntax error of data into a line and a
// message. The v3 reader numbers a parser error by the line before the
// block it was reading, which may be far above the mistake; the v2
// reader numbers it by the offending token, so data is read again with it
// to find the line.
func syntaxError(data []byte, err3 error) (int, string) {
	line, msg := splitYAMLError(err3.Error())
	var v any
	if err2 := yaml2.Unmarshal(data, &v); err2 != nil {
		if l2, m2 := splitYAMLError(err2.Error()); l2 > 0 {
			if parserProblems[m2] {
				l2++
			}
			line, msg = l2, m2
		}
	}
	return line, "YAML syntax: " + msg
}

// splitYAMLError pulls "line N: " out of a YAML library's message.
func splitYAMLError(s string) (int, string) {
	s = strings.TrimPrefix(s, "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				return n, rest[i+2:]
			}
		}
	}
	return 0, strings.ReplaceAll(s, "\n", "; ")
}
