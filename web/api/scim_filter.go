package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// SCIM filters (RFC 7644 section 3.4.2.2) over the JSON representation of
// a resource: the operators eq, ne, co, sw, ew, pr, gt, ge, lt, le; and,
// or, not and parentheses (not binds tighter than and, and than or);
// attribute paths with an optional schema URN and one sub-attribute
// (name.familyName, meta.lastModified, emails.value); and value paths
// (emails[type eq "work" and value co "@example.com"], optionally followed
// by a sub-attribute). Strings compare case-insensitively (the attributes
// served are caseExact false, ids aside); gt/ge/lt/le compare date-times
// (meta.created, meta.lastModified) as times, numbers as numbers and
// other strings lexicographically. A multi-valued attribute matches when
// any of its values does; a complex value without a sub-attribute compares
// its "value".

// scimFilter is a parsed filter.
type scimFilter interface {
	match(res map[string]any) bool
}

type scimAnd struct{ l, r scimFilter }
type scimOr struct{ l, r scimFilter }
type scimNot struct{ f scimFilter }

func (f scimAnd) match(m map[string]any) bool { return f.l.match(m) && f.r.match(m) }
func (f scimOr) match(m map[string]any) bool  { return f.l.match(m) || f.r.match(m) }
func (f scimNot) match(m map[string]any) bool { return !f.f.match(m) }

// scimCompare is attrPath op value (or attrPath pr).
type scimCompare struct {
	path []string // attribute, then an optional sub-attribute
	op   string
	val  any // string, float64, bool or nil
}

// scimValuePath is attr[filter] with an optional .sub after it.
type scimValuePath struct {
	attr   string
	filter scimFilter
	sub    string
}

func (f scimValuePath) match(m map[string]any) bool {
	for _, el := range scimMulti(scimGet(m, f.attr)) {
		obj, ok := el.(map[string]any)
		if !ok || !f.filter.match(obj) {
			continue
		}
		if f.sub == "" || scimGet(obj, f.sub) != nil {
			return true
		}
	}
	return false
}

func (f scimCompare) match(m map[string]any) bool {
	vals := scimValues(m, f.path)
	if f.op == "pr" {
		for _, v := range vals {
			if !scimEmpty(v) {
				return true
			}
		}
		return false
	}
	if f.op == "eq" && f.val == nil {
		return len(vals) == 0
	}
	if f.op == "ne" {
		if f.val == nil {
			return len(vals) > 0
		}
		for _, v := range vals {
			if scimCmp(v, "eq", f.val) {
				return false
			}
		}
		return true
	}
	for _, v := range vals {
		if scimCmp(v, f.op, f.val) {
			return true
		}
	}
	return false
}

// scimGet reads an attribute case-insensitively.
func scimGet(m map[string]any, name string) any {
	if v, ok := m[name]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

func scimMulti(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}

// scimValues returns the values at path, flattening multi-valued
// attributes; a complex value without a sub-attribute gives its "value".
func scimValues(m map[string]any, path []string) []any {
	var out []any
	for _, v := range scimMulti(scimGet(m, path[0])) {
		if len(path) > 1 {
			if obj, ok := v.(map[string]any); ok {
				out = append(out, scimMulti(scimGet(obj, path[1]))...)
			}
			continue
		}
		if obj, ok := v.(map[string]any); ok {
			if inner := scimGet(obj, "value"); inner != nil {
				out = append(out, inner)
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

func scimEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func scimCmp(have any, op string, want any) bool {
	switch w := want.(type) {
	case bool:
		h, ok := have.(bool)
		return ok && op == "eq" && h == w
	case float64:
		h, ok := have.(float64)
		if !ok {
			return false
		}
		switch op {
		case "eq":
			return h == w
		case "gt":
			return h > w
		case "ge":
			return h >= w
		case "lt":
			return h < w
		case "le":
			return h <= w
		}
		return false
	case string:
		h, ok := have.(string)
		if !ok {
			return false
		}
		hl, wl := strings.ToLower(h), strings.ToLower(w)
		switch op {
		case "eq":
			return hl == wl
		case "co":
			return strings.Contains(hl, wl)
		case "sw":
			return strings.HasPrefix(hl, wl)
		case "ew":
			return strings.HasSuffix(hl, wl)
		}
		c := strings.Compare(hl, wl)
		if ht, err := time.Parse(time.RFC3339Nano, h); err == nil {
			if wt, err := time.Parse(time.RFC3339Nano, w); err == nil {
				c = ht.Compare(wt)
			}
		}
		switch op {
		case "gt":
			return c > 0
		case "ge":
			return c >= 0
		case "lt":
			return c < 0
		case "le":
			return c <= 0
		}
	}
	return false
}

// --- parsing ---

type scimTok struct {
	kind string // "(", ")", "[", "]", "str", "word"
	text string
	str  string // the decoded string of a "str"
}

func scimLex(s string) ([]scimTok, error) {
	var out []scimTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')' || c == '[' || c == ']':
			out = append(out, scimTok{kind: string(c), text: string(c)})
			i++
		case c == '"':
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\\' {
					j++
					continue
				}
				if s[j] == '"' {
					break
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at position %d", i+1)
			}
			var v string
			if err := json.Unmarshal([]byte(s[i:j+1]), &v); err != nil {
				return nil, fmt.Errorf("invalid string at position %d", i+1)
			}
			out = append(out, scimTok{kind: "str", text: s[i : j+1], str: v})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t()[]\"", rune(s[j])) {
				j++
			}
			out = append(out, scimTok{kind: "word", text: s[i:j]})
			i = j
		}
	}
	return out, nil
}

type scimParser struct {
	toks []scimTok
	pos  int
}

func (p *scimParser) peek() *scimTok {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *scimParser) word(w string) bool {
	t := p.peek()
	if t != nil && t.kind == "word" && strings.EqualFold(t.text, w) {
		p.pos++
		return true
	}
	return false
}

// parseSCIMFilter parses a filter; an error is the reason it is invalid.
func parseSCIMFilter(s string) (scimFilter, error) {
	toks, err := scimLex(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("the filter is empty")
	}
	p := &scimParser{toks: toks}
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t != nil {
		return nil, fmt.Errorf("unexpected %q", t.text)
	}
	return f, nil
}

func (p *scimParser) or() (scimFilter, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.word("or") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = scimOr{l, r}
	}
	return l, nil
}

func (p *scimParser) and() (scimFilter, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.word("and") {
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = scimAnd{l, r}
	}
	return l, nil
}

func (p *scimParser) unary() (scimFilter, error) {
	if t := p.peek(); t != nil && t.kind == "word" && strings.EqualFold(t.text, "not") {
		if p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == "(" {
			p.pos++
			f, err := p.group()
			if err != nil {
				return nil, err
			}
			return scimNot{f}, nil
		}
	}
	if t := p.peek(); t != nil && t.kind == "(" {
		return p.group()
	}
	return p.attrExp()
}

func (p *scimParser) group() (scimFilter, error) {
	p.pos++ // (
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t == nil || t.kind != ")" {
		return nil, fmt.Errorf("missing )")
	}
	p.pos++
	return f, nil
}

// scimAttrPath splits an attribute path: an optional schema URN, the
// attribute and at most one sub-attribute.
func scimAttrPath(s string) ([]string, error) {
	if strings.HasPrefix(strings.ToLower(s), "urn:") {
		i := strings.LastIndexByte(s, ':')
		s = s[i+1:]
	}
	parts := strings.Split(s, ".")
	if len(parts) > 2 {
		return nil, fmt.Errorf("attribute path %q has more than one sub-attribute", s)
	}
	for _, part := range parts {
		if part == "" || !scimAttrName(part) {
			return nil, fmt.Errorf("%q is not an attribute path", s)
		}
	}
	return parts, nil
}

func scimAttrName(s string) bool {
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '$' && i == 0 || i > 0 && (unicode.IsDigit(r) || r == '_' || r == '-')) {
			return false
		}
	}
	return true
}

var scimOps = map[string]bool{"eq": true, "ne": true, "co": true, "sw": true, "ew": true, "gt": true, "ge": true, "lt": true, "le": true}

func (p *scimParser) attrExp() (scimFilter, error) {
	t := p.peek()
	if t == nil {
		return nil, fmt.Errorf("an expression is missing at the end")
	}
	if t.kind != "word" {
		return nil, fmt.Errorf("unexpected %q where an attribute is expected", t.text)
	}
	p.pos++
	// A value path: attr[filter] with an optional .sub right after ].
	if n := p.peek(); n != nil && n.kind == "[" {
		path, err := scimAttrPath(t.text)
		if err != nil || len(path) != 1 {
			return nil, fmt.Errorf("%q is not an attribute for a value filter", t.text)
		}
		p.pos++
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c == nil || c.kind != "]" {
			return nil, fmt.Errorf("missing ]")
		}
		p.pos++
		vp := scimValuePath{attr: path[0], filter: inner}
		if s := p.peek(); s != nil && s.kind == "word" && strings.HasPrefix(s.text, ".") {
			sub := strings.TrimPrefix(s.text, ".")
			if !scimAttrName(sub) {
				return nil, fmt.Errorf("%q is not a sub-attribute", s.text)
			}
			vp.sub = sub
			p.pos++
			// attr[filter].sub op value compares the sub-attribute of the
			// matching values.
			if o := p.peek(); o != nil && o.kind == "word" && (scimOps[strings.ToLower(o.text)] || strings.EqualFold(o.text, "pr")) {
				cmp, err := p.compare([]string{sub})
				if err != nil {
					return nil, err
				}
				return scimValuePath{attr: path[0], filter: scimAnd{inner, cmp}}, nil
			}
		}
		return vp, nil
	}
	path, err := scimAttrPath(t.text)
	if err != nil {
		return nil, err
	}
	return p.compare(path)
}

func (p *scimParser) compare(path []string) (scimFilter, error) {
	o := p.peek()
	if o == nil || o.kind != "word" {
		return nil, fmt.Errorf("an operator is missing after %s", strings.Join(path, "."))
	}
	op := strings.ToLower(o.text)
	p.pos++
	if op == "pr" {
		return scimCompare{path: path, op: op}, nil
	}
	if !scimOps[op] {
		return nil, fmt.Errorf("%q is not an operator (eq, ne, co, sw, ew, pr, gt, ge, lt, le)", o.text)
	}
	v := p.peek()
	if v == nil {
		return nil, fmt.Errorf("a value is missing after %s", o.text)
	}
	p.pos++
	c := scimCompare{path: path, op: op}
	switch {
	case v.kind == "str":
		c.val = v.str
	case v.kind == "word" && v.text == "true":
		c.val = true
	case v.kind == "word" && v.text == "false":
		c.val = false
	case v.kind == "word" && v.text == "null":
		c.val = nil
	case v.kind == "word":
		n, err := strconv.ParseFloat(v.text, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a value (a quoted string, a number, true, false or null)", v.text)
		}
		c.val = n
	default:
		return nil, fmt.Errorf("unexpected %q where a value is expected", v.text)
	}
	switch c.val.(type) {
	case bool, nil:
		if op != "eq" && op != "ne" {
			return nil, fmt.Errorf("%s compares strings, numbers and date-times, not %v", op, c.val)
		}
	case float64:
		if op == "co" || op == "sw" || op == "ew" {
			return nil, fmt.Errorf("%s compares strings", op)
		}
	}
	return c, nil
}

// --- applying to a list ---

// scimFilterSort filters and sorts a list of resources by the request's
// filter, sortBy and sortOrder.
func scimFilterSort[T any](r *http.Request, items []T) ([]T, error) {
	q := r.URL.Query()
	var f scimFilter
	if fs := strings.TrimSpace(q.Get("filter")); fs != "" {
		var err error
		if f, err = parseSCIMFilter(fs); err != nil {
			return nil, &scimError{Status: http.StatusBadRequest, ScimType: "invalidFilter", Detail: "the filter is not valid: " + err.Error()}
		}
	}
	sortBy := strings.TrimSpace(q.Get("sortBy"))
	var sortPath []string
	if sortBy != "" {
		var err error
		if sortPath, err = scimAttrPath(sortBy); err != nil {
			return nil, &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: "sortBy: " + err.Error()}
		}
	}
	desc := false
	switch strings.ToLower(q.Get("sortOrder")) {
	case "", "ascending":
	case "descending":
		desc = true
	default:
		return nil, &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: "sortOrder must be ascending or descending"}
	}
	if f == nil && sortPath == nil {
		return items, nil
	}
	type row struct {
		item T
		key  string
	}
	rows := make([]row, 0, len(items))
	for _, it := range items {
		raw, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		if f != nil && !f.match(m) {
			continue
		}
		key := ""
		if sortPath != nil {
			if vs := scimValues(m, sortPath); len(vs) > 0 {
				key = strings.ToLower(fmt.Sprint(vs[0]))
			}
		}
		rows = append(rows, row{it, key})
	}
	if sortPath != nil {
		sort.SliceStable(rows, func(i, j int) bool {
			if desc {
				return rows[i].key > rows[j].key
			}
			return rows[i].key < rows[j].key
		})
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = r.item
	}
	return out, nil
}
