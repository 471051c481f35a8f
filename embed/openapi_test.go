package embed

import (
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// operationIDPattern is the operationId convention: lower camelCase, each
// word a capital letter followed by lower-case letters or digits, so
// initialisms are written as words (listApiKeys, getSoaEntry).
var operationIDPattern = regexp.MustCompile(`^[a-z]+(?:[A-Z][a-z0-9]+)*$`)

// leadingWord is the first word of an operationId: its verb.
var leadingWord = regexp.MustCompile(`^[a-z]+`)

// operationVerbs are the words an operationId may start with: the CRUD
// verbs (list a collection, get one, create, update or patch, delete) and
// the domain verbs of actions. docs/openapi.md lists them too.
var operationVerbs = map[string]bool{
	"list": true, "get": true, "create": true, "update": true, "patch": true, "delete": true,
	"acknowledge": true, "add": true, "approve": true, "archive": true, "attach": true,
	"authorize": true, "bulk": true, "classify": true, "close": true, "complete": true,
	"confirm": true, "deliver": true,
	"deny": true, "dismiss": true, "download": true, "enable": true, "export": true, "fill": true,
	"generate": true, "import": true, "issue": true, "link": true, "login": true,
	"logout": true, "map": true, "ping": true, "preflight": true, "preview": true,
	"publish": true, "reassign": true, "redeliver": true, "register": true, "remove": true,
	"restore": true, "revoke": true, "rotate": true, "save": true, "search": true,
	"send": true, "sign": true, "submit": true, "transfer": true, "unlink": true,
	"upload": true,
	"cancel": true, "set": true,
	"disconnect": true, "exchange": true, "reconnect": true, "accept": true, "pause": true, "push": true, "receive": true, "resume": true, "run": true, "test": true,
	"sync":   true,
	"detect": true, "scan": true, "trigger": true,
	"check": true, "navigate": true, "start": true, "verify": true,
	"fetch": true,
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documentedOperation is one operation of a fragment: a path's method, or
// the method of a callback below an operation.
type documentedOperation struct {
	where string // fragment, method and path, for messages
	op    map[string]any
}

// openAPIFragments parses every YAML fragment of the OpenAPI document.
func openAPIFragments(t *testing.T) map[string]map[string]any {
	t.Helper()
	names, err := fs.Glob(OpenAPI, "openapi/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 2 {
		t.Fatalf("found %d OpenAPI fragments; the glob is broken", len(names))
	}
	frags := map[string]map[string]any{}
	for _, name := range names {
		raw, err := fs.ReadFile(OpenAPI, name)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		frags[name] = doc
	}
	return frags
}

// operationsOf lists the operations under a map of path items, callbacks
// included, in a stable order.
func operationsOf(t *testing.T, where string, paths map[string]any) []documentedOperation {
	t.Helper()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ops []documentedOperation
	for _, path := range keys {
		item, ok := paths[path].(map[string]any)
		if !ok {
			t.Errorf("%s %s: the path item is not a mapping", where, path)
			continue
		}
		for _, method := range httpMethods {
			v, present := item[method]
			if !present {
				continue
			}
			op, ok := v.(map[string]any)
			if !ok {
				t.Errorf("%s %s %s: the operation is not a mapping", where, strings.ToUpper(method), path)
				continue
			}
			at := where + " " + strings.ToUpper(method) + " " + path
			ops = append(ops, documentedOperation{where: at, op: op})
			callbacks, _ := op["callbacks"].(map[string]any)
			for name, cb := range callbacks {
				exprs, ok := cb.(map[string]any)
				if !ok {
					t.Errorf("%s: callback %s is not a mapping", at, name)
					continue
				}
				ops = append(ops, operationsOf(t, at+" callback "+name, exprs)...)
			}
		}
	}
	return ops
}

// TestOperationIDs fails when an operation of any fragment has no
// operationId, when one is used twice across the document, or when one
// does not follow the convention (lower camelCase starting with a known
// verb). The router contract test in web/ keeps the document's paths equal
// to the routes, so every route gets an operationId.
func TestOperationIDs(t *testing.T) {
	frags := openAPIFragments(t)
	names := make([]string, 0, len(frags))
	for name := range frags {
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[string]string{}
	count := 0
	for _, name := range names {
		paths, _ := frags[name]["paths"].(map[string]any)
		for _, o := range operationsOf(t, name, paths) {
			count++
			id, _ := o.op["operationId"].(string)
			switch {
			case id == "":
				t.Errorf("%s: no operationId", o.where)
				continue
			case !operationIDPattern.MatchString(id):
				t.Errorf("%s: operationId %q is not lower camelCase (words as Capital+lower, e.g. listApiKeys)", o.where, id)
			default:
				verb := leadingWord.FindString(id)
				if !operationVerbs[verb] {
					t.Errorf("%s: operationId %q starts with %q, which is not a verb of the convention (docs/openapi.md)", o.where, id, verb)
				}
			}
			if prev, dup := seen[id]; dup {
				t.Errorf("%s: operationId %q is also used by %s", o.where, id, prev)
				continue
			}
			seen[id] = o.where
		}
	}
	if count < 100 {
		t.Fatalf("found only %d operations; the walk is broken", count)
	}
}

// TestTagsDescribed fails when an operation uses a tag that no fragment
// declares, or when a declared tag has no description or is declared twice.
func TestTagsDescribed(t *testing.T) {
	frags := openAPIFragments(t)
	declared := map[string]bool{}
	for name, doc := range frags {
		tags, _ := doc["tags"].([]any)
		for _, tv := range tags {
			tag, _ := tv.(map[string]any)
			n, _ := tag["name"].(string)
			if n == "" {
				t.Errorf("%s: a tag without a name", name)
				continue
			}
			if declared[n] {
				t.Errorf("%s: tag %q is declared twice", name, n)
			}
			declared[n] = true
			if d, _ := tag["description"].(string); strings.TrimSpace(d) == "" {
				t.Errorf("%s: tag %q has no description", name, n)
			}
		}
	}
	for name, doc := range frags {
		paths, _ := doc["paths"].(map[string]any)
		for _, o := range operationsOf(t, name, paths) {
			tags, _ := o.op["tags"].([]any)
			for _, tv := range tags {
				if n, _ := tv.(string); !declared[n] {
					t.Errorf("%s: tag %q is not declared in any fragment's tags", o.where, n)
				}
			}
		}
	}
}
