package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// MaxFileBytes bounds what ReadFile reads and Parse takes: far above any
// real config file, and a guard against reading a trace by mistake.
const MaxFileBytes = 32 << 20

// maxAliasDepth bounds chains of aliases and merges, which a well-formed
// document never makes long.
const maxAliasDepth = 100

// Checker is a config type that checks its own values: Decode calls Check
// once the whole value is read, with a view at the value's field path, and
// a type built in Go is checked by calling it (see Validate). Check reports
// every problem it finds and calls the Check of the types it holds, each
// with its own view (Errors.In, Errors.Index), so that one method says
// what a valid value of each type is.
type Checker interface {
	Check(e *Errors)
}

// Unmarshaler is a type that reads itself from its YAML value, such as a
// field written either as a string or as a mapping. It reports problems
// with v.Fail, and may hand parts of v to Value.Decode.
type Unmarshaler interface {
	UnmarshalConfig(v Value)
}

// Validate runs c's Check for a value built in Go; file names it in
// errors, as Errors.Err returns them.
func Validate(file string, c Checker) error {
	e := NewErrors(file)
	c.Check(e)
	return e.Err()
}

// Decode reads data, one YAML or JSON document, into v (a non-nil pointer
// to a struct) strictly, then calls v's Check if it has one. file names
// the source in errors. Every problem is reported (Errors.Err): unknown
// fields (with the known ones and the likeliest meant), keys given twice,
// missing required fields, values of the wrong type or out of range, and
// what Check finds, each with its line and field path.
func Decode(data []byte, file string, v any) error {
	e := NewErrors(file)
	if root, ok := Parse(data, e); ok {
		root.Decode(v)
	}
	return e.Err()
}

// TopKeys returns the keys of data's top-level mapping in the order
// written, or nil when data is not one readable YAML or JSON mapping. A
// command that reads several kinds of file tells them apart with it
// before decoding one strictly.
func TopKeys(data []byte) []string {
	var doc yaml.Node
	if len(data) > MaxFileBytes || yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
	}
	return keys
}

// ReadFile reads a config file of at most maxBytes (0: MaxFileBytes).
// what names the kind of file in errors ("cluster spec").
func ReadFile(path, what string, maxBytes int) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = MaxFileBytes
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(data) > maxBytes {
		return nil, &Error{File: path, Msg: fmt.Sprintf("file is larger than %d MiB; is it a %s?", maxBytes>>20, what)}
	}
	return data, nil
}

// Parse reads data as one YAML document (JSON is YAML) for e's file and
// returns its root value. It reports, and returns ok = false for, what
// leaves nothing to decode: a file over MaxFileBytes, a YAML syntax error
// and a second document. An empty file is a null root value; decoding it
// into a struct reports that the file is empty.
func Parse(data []byte, e *Errors) (root Value, ok bool) {
	r := e.r
	if len(data) > MaxFileBytes {
		r.fail(0, "", fmt.Sprintf("file is larger than %d MiB; is it a config file?", MaxFileBytes>>20))
		return Value{}, false
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		line, msg := syntaxError(data, err)
		r.fail(line, "", msg)
		return Value{}, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		r.fail(extra.Line, "", "a second YAML document; want one")
		return Value{}, false
	} else if !errors.Is(err, io.EOF) {
		line, msg := syntaxError(data, err)
		r.fail(line, "", msg)
		return Value{}, false
	}
	n := &doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	} else if n.Kind == 0 || n.Kind == yaml.DocumentNode {
		n = nil // no content: an empty file
	}
	if r.root == nil {
		r.root = n
	}
	d := &decoder{r: r, limit: 1_000_000 + 10*countNodes(n)}
	return Value{d: d, n: n, path: e.path, top: true}, true
}

// ParseDocuments reads data as a stream of YAML documents separated by
// "---" lines (a Kubernetes manifest file) for e's file, and returns them
// as one list value whose entries are the documents' roots, in order,
// with field paths "[0]", "[1]", ...; empty documents are left out, so
// an entry's index counts the documents that have content. Lines are
// the file's. It reports, and returns ok = false for, a file over
// MaxFileBytes and a YAML syntax error.
func ParseDocuments(data []byte, e *Errors) (root Value, ok bool) {
	r := e.r
	if len(data) > MaxFileBytes {
		r.fail(0, "", fmt.Sprintf("file is larger than %d MiB; is it a config file?", MaxFileBytes>>20))
		return Value{}, false
	}
	list := &yaml.Node{Kind: yaml.SequenceNode, Line: 1}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, msg := syntaxError(data, err)
			r.fail(line, "", msg)
			return Value{}, false
		}
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && !isNull(doc.Content[0]) {
			list.Content = append(list.Content, doc.Content[0])
		}
	}
	if r.root == nil {
		r.root = list
	}
	d := &decoder{r: r, limit: 1_000_000 + 10*countNodes(list)}
	return Value{d: d, n: list, path: e.path}, true
}

// countNodes counts the nodes of the tree without following aliases.
func countNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

// decoder holds what one document's decoding shares: the problems and
// the bound on nodes visited, which aliases can multiply.
type decoder struct {
	r      *report
	visits int
	limit  int
	over   bool
}

// visit counts a node and reports once when the document expands past
// the bound (aliases of aliases, a "billion laughs").
func (d *decoder) visit() bool {
	d.visits++
	if d.visits > d.limit {
		if !d.over {
			d.over = true
			d.r.fail(0, "", fmt.Sprintf("the document expands to more than %d YAML nodes; are aliases nested?", d.limit))
		}
		return false
	}
	return true
}

// Value is one YAML value being decoded, with its field path. An
// Unmarshaler receives one.
type Value struct {
	d    *decoder
	n    *yaml.Node // nil: null or absent
	path string
	top  bool // the document's root
}

// Path is the value's field path, e.g. "nodes[2].mig".
func (v Value) Path() string { return v.path }

// Line is the line the value starts on (0: unknown).
func (v Value) Line() int {
	if v.n == nil {
		return 0
	}
	return v.n.Line
}

// IsNull reports a null value ("~", "null" or nothing after the colon).
func (v Value) IsNull() bool { return isNull(v.n) }

// IsList reports a list (YAML sequence, JSON array).
func (v Value) IsList() bool { return v.n != nil && v.n.Kind == yaml.SequenceNode }

// IsMapping reports a mapping (JSON object).
func (v Value) IsMapping() bool { return v.n != nil && v.n.Kind == yaml.MappingNode }

// IsScalar reports a single value: a string, number or boolean.
func (v Value) IsScalar() bool { return v.n != nil && v.n.Kind == yaml.ScalarNode && !isNull(v.n) }

// String returns the value's text when it is a string: quoted, or plain
// and not a word YAML 1.1 reads as a boolean (yes, no, on, off, y, n).
func (v Value) String() (string, bool) {
	if v.n == nil || v.n.Kind != yaml.ScalarNode || v.n.Tag != "!!str" || isBoolWord(v.n) {
		return "", false
	}
	return v.n.Value, true
}

// Bool returns the value when it is a boolean: true or false, or a word
// YAML 1.1 reads as one (yes, no, on, off, y, n).
func (v Value) Bool() (bool, bool) {
	if v.n == nil {
		return false, false
	}
	return boolOf(v.n)
}

// Describe names the value for a message: `"text"`, "number 3",
// "boolean true", "a list", "a mapping", "nothing".
func (v Value) Describe() string { return describe(v.n) }

// Items returns a list's entries (nil for anything else).
func (v Value) Items() []Value {
	if !v.IsList() {
		return nil
	}
	out := make([]Value, 0, len(v.n.Content))
	for i, c := range v.n.Content {
		c = resolve(c)
		if !v.d.visit() {
			return out
		}
		out = append(out, Value{d: v.d, n: c, path: v.path + "[" + strconv.Itoa(i) + "]"})
	}
	return out
}

// Field returns the value of key name in a mapping (merged keys
// included), and false when the value is not a mapping or has no such
// key. A type that reads itself (Unmarshaler) looks at one field, such as
// a kind, before it decodes the whole.
func (v Value) Field(name string) (Value, bool) {
	if !v.IsMapping() {
		return Value{}, false
	}
	budget := maxFind
	k, c := findKey(v.n, name, &budget)
	if k == nil {
		return Value{}, false
	}
	return Value{d: v.d, n: resolve(c), path: Join(v.path, name)}, true
}

// Fail reports that the value cannot be read, with what was expected; as
// with a wrong type, Check problems at or around its path are dropped.
func (v Value) Fail(format string, args ...any) {
	v.d.r.fail(v.Line(), v.path, fmt.Sprintf(format, args...))
}

// Errors is the view at the value's path, for problems that are not a
// failure to read it.
func (v Value) Errors() *Errors { return &Errors{r: v.d.r, path: v.path} }

// Decode reads the value into dst, a non-nil pointer, by dst's type (see
// the package comment), and then calls dst's Check if it has one.
func (v Value) Decode(dst any) {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic(fmt.Sprintf("config: Decode needs a non-nil pointer, got %T", dst))
	}
	if v.d == nil {
		return // Parse failed: nothing to read
	}
	if v.top && isNull(v.n) {
		if t := indirect(rv.Type().Elem()); t.Kind() == reflect.Struct {
			v.d.r.fail(0, v.path, fmt.Sprintf("the file is empty; want a mapping with fields %s", strings.Join(fieldsOf(t).names, ", ")))
			return
		}
	}
	v.d.decode(v.n, v.path, rv.Elem())
	if c, ok := dst.(Checker); ok {
		c.Check(v.Errors())
	}
}

func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var unmarshalerType = reflect.TypeFor[Unmarshaler]()

// decode reads n into rv.
func (d *decoder) decode(n *yaml.Node, path string, rv reflect.Value) {
	n = resolve(n)
	if !d.visit() {
		return
	}
	if rv.CanAddr() && rv.Addr().Type().Implements(unmarshalerType) {
		if !isNull(n) {
			rv.Addr().Interface().(Unmarshaler).UnmarshalConfig(Value{d: d, n: n, path: path})
		}
		return
	}
	if isNull(n) {
		return // as if absent: the field keeps its value
	}
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		d.decode(n, path, rv.Elem())
	case reflect.Struct:
		d.decodeStruct(n, path, rv)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.r.fail(n.Line, path, "want a list, got "+describe(n))
			return
		}
		s := reflect.MakeSlice(rv.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, path+"["+strconv.Itoa(i)+"]", s.Index(i))
		}
		rv.Set(s)
	case reflect.Map:
		d.decodeMap(n, path, rv)
	case reflect.String:
		if s, ok := (Value{n: n}).String(); ok {
			rv.SetString(s)
		} else {
			d.r.fail(n.Line, path, "want a string, got "+describe(n)+"; put it in quotes")
		}
	case reflect.Bool:
		if b, ok := boolOf(n); ok {
			rv.SetBool(b)
		} else {
			d.r.fail(n.Line, path, "want true or false, got "+describe(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, msg := intOf(n)
		if msg == "" && rv.OverflowInt(i) {
			msg = "number " + n.Value + " is out of range"
		}
		if msg != "" {
			d.r.fail(n.Line, path, msg)
			return
		}
		rv.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, msg := uintOf(n)
		if msg == "" && rv.OverflowUint(u) {
			msg = "number " + n.Value + " is out of range"
		}
		if msg != "" {
			d.r.fail(n.Line, path, msg)
			return
		}
		rv.SetUint(u)
	case reflect.Float32, reflect.Float64:
		f, msg := floatOf(n)
		if msg == "" && rv.OverflowFloat(f) {
			msg = "number " + n.Value + " is out of range"
		}
		if msg != "" {
			d.r.fail(n.Line, path, msg)
			return
		}
		rv.SetFloat(f)
	default:
		panic(fmt.Sprintf("config: cannot decode into %s (%s)", rv.Type(), path))
	}
}

// pair is one key and value of a mapping, merged keys included.
type pair struct{ k, v *yaml.Node }

// pairs lists mapping n's keys and values, those of mappings merged in
// with "<<" in their place. It reports keys that are not scalars.
func (d *decoder) pairs(n *yaml.Node, path string, depth int) []pair {
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !d.visit() {
			return out
		}
		k, v := resolve(n.Content[i]), n.Content[i+1]
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
			d.r.add(lineOfNode(k, n), path, "want field names, got "+describe(k)+" as a key")
		case isMerge(k) && depth < maxAliasDepth:
			for _, m := range mergeSources(v) {
				out = append(out, d.pairs(m, path, depth+1)...)
			}
		default:
			out = append(out, pair{k, v})
		}
	}
	return out
}

// keys checks a mapping's keys: each once (a key given twice is
// reported, and its second value ignored). It returns the pairs to read.
func (d *decoder) keys(n *yaml.Node, path string) []pair {
	all := d.pairs(n, path, 0)
	seen := make(map[string]int, len(all))
	out := all[:0]
	for _, p := range all {
		if line, dup := seen[p.k.Value]; dup {
			d.r.addf(p.k.Line, Join(path, p.k.Value), "appears twice (also on line %d)", line)
			continue
		}
		seen[p.k.Value] = p.k.Line
		out = append(out, p)
	}
	return out
}

func (d *decoder) decodeStruct(n *yaml.Node, path string, rv reflect.Value) {
	fs := fieldsOf(rv.Type())
	if n.Kind != yaml.MappingNode {
		d.r.fail(n.Line, path, fmt.Sprintf("want a mapping with fields %s, got %s", strings.Join(fs.names, ", "), describe(n)))
		return
	}
	given := make([]bool, len(fs.list))
	meant := make([]bool, len(fs.list)) // named by an unknown key's hint
	for _, p := range d.keys(n, path) {
		fp := Join(path, p.k.Value)
		i, ok := fs.index[p.k.Value]
		if !ok {
			msg := fmt.Sprintf("unknown field (known fields: %s)", strings.Join(fs.names, ", "))
			if s := Suggest(p.k.Value, fs.names); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
				meant[fs.index[s]] = true
			}
			d.r.add(p.k.Line, fp, msg)
			continue
		}
		f := fs.list[i]
		v := resolve(p.v)
		if isNull(v) {
			continue
		}
		given[i] = true
		if f.max > 0 && v.Kind == yaml.SequenceNode && len(v.Content) > f.max {
			d.r.fail(v.Line, fp, fmt.Sprintf("lists %d entries; at most %d are allowed", len(v.Content), f.max))
			continue
		}
		d.decode(v, fp, rv.FieldByIndex(f.index))
	}
	for i, f := range fs.list {
		switch {
		case given[i]:
		case meant[i]:
			// Misspelt rather than missing: the hint says so, and
			// what Check would say of its zero value is no news.
			d.r.failed = append(d.r.failed, Join(path, f.name))
		case f.required:
			d.r.fail(n.Line, Join(path, f.name), "required field is missing")
		}
	}
}

func (d *decoder) decodeMap(n *yaml.Node, path string, rv reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.r.fail(n.Line, path, "want a mapping, got "+describe(n))
		return
	}
	if rv.Type().Key().Kind() != reflect.String {
		panic(fmt.Sprintf("config: cannot decode into %s: keys must be strings", rv.Type()))
	}
	if rv.IsNil() {
		rv.Set(reflect.MakeMap(rv.Type()))
	}
	for _, p := range d.keys(n, path) {
		key, ok := (Value{n: p.k}).String()
		if !ok {
			d.r.fail(p.k.Line, Join(path, p.k.Value), "want a string key, got "+describe(p.k)+"; put it in quotes")
			continue
		}
		elem := reflect.New(rv.Type().Elem()).Elem()
		d.decode(p.v, Join(path, key), elem)
		rv.SetMapIndex(reflect.ValueOf(key).Convert(rv.Type().Key()), elem)
	}
}

// field is one struct field a mapping may set.
type field struct {
	name     string
	index    []int
	required bool
	max      int // the most list entries (0: any number)
}

type fieldSet struct {
	list  []field
	names []string // in declaration order, for messages
	index map[string]int
}

var fieldCache sync.Map // reflect.Type -> *fieldSet

// fieldsOf reads a struct type's fields: each exported field is the key
// its json tag names (a file is YAML or JSON with the same names), and is
// left out when the tag is "-" or absent. A config tag adds options:
// "required", and "max=N" for a list of at most N entries.
func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{index: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		f := field{name: name, index: sf.Index}
		for _, opt := range strings.Split(sf.Tag.Get("config"), ",") {
			switch {
			case opt == "":
			case opt == "required":
				f.required = true
			case strings.HasPrefix(opt, "max="):
				m, err := strconv.Atoi(opt[len("max="):])
				if err != nil || m <= 0 {
					panic(fmt.Sprintf("config: %s.%s: bad option %q", t, sf.Name, opt))
				}
				f.max = m
			default:
				panic(fmt.Sprintf("config: %s.%s: unknown option %q", t, sf.Name, opt))
			}
		}
		fs.index[name] = len(fs.list)
		fs.list = append(fs.list, f)
		fs.names = append(fs.names, name)
	}
	actual, _ := fieldCache.LoadOrStore(t, fs)
	return actual.(*fieldSet)
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > maxAliasDepth {
			return nil
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func isMerge(k *yaml.Node) bool { return k.Tag == "!!merge" }

// mergeSources are the mappings a "<<" key merges: one mapping, or a list
// of them.
func mergeSources(v *yaml.Node) []*yaml.Node {
	v = resolve(v)
	switch {
	case v == nil:
		return nil
	case v.Kind == yaml.MappingNode:
		return []*yaml.Node{v}
	case v.Kind == yaml.SequenceNode:
		var out []*yaml.Node
		for _, c := range v.Content {
			if c = resolve(c); c != nil && c.Kind == yaml.MappingNode {
				out = append(out, c)
			}
		}
		return out
	}
	return nil
}

func lineOfNode(n, parent *yaml.Node) int {
	if n != nil {
		return n.Line
	}
	return parent.Line
}

// boolWords are the plain words YAML 1.1 reads as booleans and YAML 1.2
// as strings. A bool field takes them; a string field refuses them
// unquoted, since readers disagree on what they are.
var boolWords = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

func isBoolWord(n *yaml.Node) bool {
	_, ok := boolWords[n.Value]
	return ok && n.Style == 0 && n.Tag == "!!str"
}

func boolOf(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode {
		return false, false
	}
	if isBoolWord(n) {
		return boolWords[n.Value], true
	}
	if n.Tag == "!!bool" {
		var b bool
		if n.Decode(&b) == nil {
			return b, true
		}
	}
	return false, false
}

// number is a numeric scalar's value as the YAML library reads it: int,
// int64, uint64 or float64.
func number(n *yaml.Node) (any, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return nil, false
	}
	var x any
	if n.Decode(&x) != nil {
		return nil, false
	}
	return x, true
}

// twoTo63 is 2^63, the first float64 past int64's range.
const twoTo63 = 9223372036854775808.0

func intOf(n *yaml.Node) (int64, string) {
	x, ok := number(n)
	if !ok {
		return 0, "want a whole number, got " + describe(n)
	}
	switch x := x.(type) {
	case int:
		return int64(x), ""
	case int64:
		return x, ""
	case uint64:
		return 0, "number " + n.Value + " is out of range"
	case float64:
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return 0, "want a whole number, got " + n.Value
		case x <= -twoTo63 || x >= twoTo63:
			return 0, "number " + n.Value + " is out of range"
		case x != math.Trunc(x):
			return 0, "want a whole number, got " + n.Value
		}
		return int64(x), ""
	}
	return 0, "want a whole number, got " + describe(n)
}

func uintOf(n *yaml.Node) (uint64, string) {
	x, ok := number(n)
	neg := "want a whole number >= 0, got " + describe(n)
	if !ok {
		return 0, neg
	}
	switch x := x.(type) {
	case int:
		if x < 0 {
			return 0, neg
		}
		return uint64(x), ""
	case int64:
		if x < 0 {
			return 0, neg
		}
		return uint64(x), ""
	case uint64:
		return x, ""
	case float64:
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0) || x < 0:
			return 0, neg
		case x >= 2*twoTo63:
			return 0, "number " + n.Value + " is out of range"
		case x != math.Trunc(x):
			return 0, "want a whole number, got " + n.Value
		}
		return uint64(x), ""
	}
	return 0, neg
}

func floatOf(n *yaml.Node) (float64, string) {
	x, ok := number(n)
	if !ok {
		return 0, "want a number, got " + describe(n)
	}
	var f float64
	switch x := x.(type) {
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	case float64:
		f = x
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "want a finite number, got " + n.Value
	}
	return f, ""
}

// describe names a node for messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case isBoolWord(n):
		return n.Value + ", which YAML 1.1 reads as a boolean"
	}
	switch n.Tag {
	case "!!str":
		return strconv.Quote(n.Value)
	case "!!bool":
		return "boolean " + n.Value
	case "!!int", "!!float":
		return "number " + n.Value
	}
	return strings.TrimPrefix(n.Tag, "!!") + " " + strconv.Quote(n.Value)
}

// Names lists the field names of struct type T in declaration order, as
// a file writes them, for messages and documentation tests.
func Names[T any]() []string {
	return slices.Clone(fieldsOf(indirect(reflect.TypeFor[T]())).names)
}
