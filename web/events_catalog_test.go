package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// emittedEvents reads app/*.go and returns every event type the code can
// emit: ResourceEvent(resource, verb) calls (a verb held in a variable
// counts with every string assigned to it in the function) and Event
// literals whose Type is a string literal or a constant.
func emittedEvents(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "app", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := strLit(vs.Values[i]); ok {
							consts[id.Name] = s
						}
					}
				}
			}
			return true
		})
	}
	out := map[string]string{}
	for _, f := range parsed {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Name.Name == "ResourceEvent" || fn.Name.Name == "setArchived" {
				continue
			}
			// Strings assigned to each local variable of the function.
			assigned := map[string][]string{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
					for i, l := range as.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							if s, ok := strLit(as.Rhs[i]); ok {
								assigned[id.Name] = append(assigned[id.Name], s)
							}
						}
					}
				}
				return true
			})
			value := func(e ast.Expr) []string {
				if s, ok := strLit(e); ok {
					return []string{s}
				}
				if id, ok := e.(*ast.Ident); ok {
					if s, ok := consts[id.Name]; ok {
						return []string{s}
					}
					return assigned[id.Name]
				}
				return nil
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				pos := func() string { return fset.Position(n.Pos()).String() }
				switch x := n.(type) {
				case *ast.CallExpr:
					// setArchived(ctx, a, resource, ...) raises resource.archived
					// and resource.restored.
					if ix, ok := x.Fun.(*ast.IndexExpr); ok {
						x = &ast.CallExpr{Fun: ix.X, Args: x.Args}
					}
					if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "setArchived" && len(x.Args) >= 3 {
						res := value(x.Args[2])
						if len(res) != 1 {
							t.Errorf("%s: cannot resolve the resource of a setArchived call", pos())
						}
						for _, r := range res {
							out[r+".archived"], out[r+".restored"] = pos(), pos()
						}
					}
					if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "ResourceEvent" && len(x.Args) >= 2 {
						res, verbs := value(x.Args[0]), value(x.Args[1])
						if len(res) != 1 || len(verbs) == 0 {
							t.Errorf("%s: cannot resolve the event type of a ResourceEvent call", pos())
						}
						for _, r := range res {
							for _, v := range verbs {
								out[r+"."+v] = pos()
							}
						}
					}
				case *ast.CompositeLit:
					switch ty := x.Type.(type) {
					case *ast.Ident:
						if ty.Name == "Event" {
							eventLit(x, value, pos, out, t)
						}
					case *ast.ArrayType:
						if el, ok := ty.Elt.(*ast.Ident); ok && el.Name == "Event" {
							for _, e := range x.Elts {
								if lit, ok := e.(*ast.CompositeLit); ok && lit.Type == nil {
									eventLit(lit, value, pos, out, t)
								}
							}
						}
					}
				}
				return true
			})
		}
	}
	return out
}

// eventLit records the Type of an Event literal.
func eventLit(x *ast.CompositeLit, value func(ast.Expr) []string, pos func() string, out map[string]string, t *testing.T) {
	for _, el := range x.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "Type" {
			continue
		}
		vs := value(kv.Value)
		if len(vs) == 0 {
			t.Errorf("%s: cannot resolve an Event literal's Type", pos())
		}
		for _, v := range vs {
			out[v] = pos()
		}
	}
}

func strLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// TestEventCatalogListsEveryEmittedEvent fails when app code emits an event
// type that docs/webhooks.md's catalog table or the OpenAPI EventEnvelope
// description does not list, or when either lists one nothing emits.
func TestEventCatalogListsEveryEmittedEvent(t *testing.T) {
	emitted := emittedEvents(t)
	if len(emitted) < 30 {
		t.Fatalf("found only %d emitted events; the scan is broken", len(emitted))
	}
	// Not raised through app's journal: the questionnaire flow's event, and
	// ping, which the delivery machinery sends to one subscription only.
	external := map[string]bool{"vendor.questionnaire.submitted": true, "ping": true}

	doc, err := os.ReadFile(filepath.Join("..", "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	spec, err := os.ReadFile(filepath.Join("..", "embed", "openapi", "events.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(spec), "    EventEnvelope:")
	j := strings.Index(string(spec), "      required: [id, event, timestamp, data]")
	if i < 0 || j < i {
		t.Fatal("EventEnvelope description not found in events.yaml")
	}
	envelope := string(spec[i:j])

	var names []string
	for name := range emitted {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !documented[name] {
			t.Errorf("event %s (emitted at %s) is missing from the catalog table in docs/webhooks.md", name, emitted[name])
		}
		if !regexp.MustCompile(`(^|[\s,(])` + regexp.QuoteMeta(name) + `([\s,(]|$)`).MatchString(envelope) {
			t.Errorf("event %s (emitted at %s) is missing from the EventEnvelope description in events.yaml", name, emitted[name])
		}
	}
	for name := range documented {
		if emitted[name] == "" && !external[name] {
			t.Errorf("docs/webhooks.md lists %s, which no code emits", name)
		}
	}
}
