package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/getkin/kin-openapi/openapi3"
)

// sweepFixture is one resource kind the cross-organization sweep can point
// at. names lists every way an operation refers to the kind: the collection
// path segment before an {id} parameter ("vendors"), named path or query
// parameters ("vendorId") and body reference fields ("assigneeId").
//
// When a new resource kind lands, add ONE entry here. An operation whose
// path or query names an id parameter that no entry claims fails the sweep,
// so a new route is never skipped silently.
type sweepFixture struct {
	kind  string
	names []string
	// create makes one resource of the kind in org and returns its id; ref
	// returns the id of another kind's fixture in the same org (created
	// first). A nil create means the kind cannot be created yet: the sweep
	// then uses a syntactically valid id with prefix, which proves only
	// that an id unknown to the caller's organization is 404, not that a
	// real resource of another organization is hidden.
	create func(e *testEnv, org string, ref func(kind string) string) string
	prefix string
	// shared marks kinds every organization may read (built-in catalogs,
	// public portals): the 404 assertion does not apply to them.
	shared bool
}

var sweepFixtures = []sweepFixture{
	{kind: "person", names: []string{"people", "personId", "assigneeId", "ownerId", "newOwnerId", "userId"}, prefix: app.PrefixPerson,
		create: func(e *testEnv, org string, _ func(string) string) string {
			return e.person(org, "sweep-"+strings.ToLower(org[len(org)-6:])+"@example.com", app.RoleEmployee)
		}},
	{kind: "device", names: []string{"devices", "deviceId"}, prefix: app.PrefixDevice,
		create: func(e *testEnv, org string, ref func(string) string) string {
			p, err := e.app.LinkDevice(e.ctx(org), ref("person"), app.DeviceLink{Name: "Sweep laptop", Hostname: "sweep-1", Platform: "linux"})
			if err != nil || len(p.Devices) == 0 {
				e.t.Fatalf("device fixture: %v", err)
			}
			return p.Devices[0].ID
		}},
	{kind: "vendor", names: []string{"vendors", "vendorId"}, prefix: app.PrefixVendor,
		create: func(e *testEnv, org string, ref func(string) string) string {
			v, err := e.app.CreateVendor(e.ctx(org), app.VendorInput{Name: app.Ptr("Sweep vendor"), AssigneeID: app.Some(ref("person"))})
			if err != nil {
				e.t.Fatalf("vendor fixture: %v", err)
			}
			return v.ID
		}},
	{kind: "api_key", names: []string{"api-keys", "apiKeyId", "keyId"}, prefix: app.PrefixAPIKey,
		create: func(e *testEnv, org string, _ func(string) string) string {
			k, err := e.app.CreateAPIKey(e.ctx(org), app.APIKeyCreate{Name: "sweep", Role: string(app.RoleAdmin)})
			if err != nil {
				e.t.Fatalf("api key fixture: %v", err)
			}
			return k.ID
		}},
	{kind: "control", names: []string{"controls", "controlId", "linkedControlIds", "controlIds"}, prefix: app.PrefixControl,
		create: func(e *testEnv, org string, _ func(string) string) string {
			now := e.app.Now()
			c := &app.Control{ID: app.NewID(app.PrefixControl), Name: "Sweep control", Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
			if err := e.db.CreateControl(e.ctx(org), org, c); err != nil {
				e.t.Fatalf("control fixture: %v", err)
			}
			return c.ID
		}},
}

// sweepBodies overrides the generated request body of an operation
// ("METHOD /path") when the schema alone cannot produce one that passes
// validation.
var sweepBodies = map[string]any{}

// sweepNotWrites lists non-GET operations that do not change data, with
// the reason; the auditor sweep skips them.
var sweepNotWrites = map[string]string{}

// sweepFixtureSet is the fixtures of one organization by kind.
type sweepFixtureSet struct {
	org string
	ids map[string]string
}

func (e *testEnv) sweepFixtures(org string) sweepFixtureSet {
	e.t.Helper()
	set := sweepFixtureSet{org: org, ids: map[string]string{}}
	byKind := map[string]sweepFixture{}
	for _, f := range sweepFixtures {
		byKind[f.kind] = f
	}
	var mk func(kind string) string
	mk = func(kind string) string {
		if id, ok := set.ids[kind]; ok {
			return id
		}
		f, ok := byKind[kind]
		if !ok {
			e.t.Fatalf("fixture %q refers to unknown kind", kind)
		}
		id := app.NewID(f.prefix)
		if f.create != nil {
			id = f.create(e, org, mk)
		}
		set.ids[kind] = id
		return id
	}
	for _, f := range sweepFixtures {
		mk(f.kind)
	}
	return set
}

// sweepKind returns the fixture an id name refers to.
func sweepKind(name string) (sweepFixture, bool) {
	for _, f := range sweepFixtures {
		for _, n := range f.names {
			if n == name {
				return f, true
			}
		}
	}
	return sweepFixture{}, false
}

// sweepOp is one documented operation.
type sweepOp struct {
	method, path string
	op           *openapi3.Operation
	item         *openapi3.PathItem
}

func (o sweepOp) name() string { return o.method + " " + o.path }

func (o sweepOp) public() bool { return o.op.Security != nil && len(*o.op.Security) == 0 }

func (o sweepOp) params() openapi3.Parameters {
	return append(append(openapi3.Parameters{}, o.item.Parameters...), o.op.Parameters...)
}

// loadSweepOps reads every operation of the served OpenAPI document.
func loadSweepOps(t *testing.T, e *testEnv) []sweepOp {
	t.Helper()
	rec := e.do("GET", "/v1/openapi.json", "", nil)
	wantStatus(t, rec, http.StatusOK)
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("load document: %v", err)
	}
	var ops []sweepOp
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops = append(ops, sweepOp{method: strings.ToUpper(method), path: path, op: op, item: item})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].name() < ops[j].name() })
	if len(ops) == 0 {
		t.Fatal("the document lists no operations")
	}
	return ops
}

// sweepRequest builds the path (ids filled from set) and body of op. It
// fails the test on an id parameter no fixture claims. shared reports that
// every id of the path is of a kind all organizations may read.
func sweepRequest(t *testing.T, o sweepOp, set sweepFixtureSet) (path, query string, body []byte, contentType string, hasPathIDs, shared bool) {
	t.Helper()
	segs := strings.Split(strings.TrimPrefix(o.path, "/"), "/")
	shared = true
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		name := strings.Trim(s, "{}")
		key := name
		if name == "id" && i > 0 {
			key = segs[i-1]
		}
		f, ok := sweepKind(key)
		if !ok {
			t.Fatalf("%s: path parameter {%s} (%s) matches no sweep fixture; add the resource kind to sweepFixtures", o.name(), name, key)
		}
		segs[i] = set.ids[f.kind]
		hasPathIDs = true
		shared = shared && f.shared
	}
	path = "/" + strings.Join(segs, "/")
	q := []string{}
	for _, p := range o.params() {
		if p.Value == nil || p.Value.In != "query" {
			continue
		}
		n := p.Value.Name
		if !strings.HasSuffix(n, "Id") && !strings.HasSuffix(n, "Ids") {
			continue
		}
		f, ok := sweepKind(n)
		if !ok {
			t.Fatalf("%s: query parameter %s matches no sweep fixture; add it to sweepFixtures", o.name(), n)
		}
		q = append(q, n+"="+set.ids[f.kind])
	}
	query = strings.Join(q, "&")
	if b, ok := sweepBodies[o.name()]; ok {
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return path, query, raw, "application/json", hasPathIDs, shared
	}
	if o.op.RequestBody == nil || o.op.RequestBody.Value == nil {
		return path, query, nil, "", hasPathIDs, shared
	}
	content := o.op.RequestBody.Value.Content
	if mt := content.Get("application/json"); mt != nil {
		v := sweepValue(t, o, "", mt.Schema, set, 0)
		if v == nil {
			v = map[string]any{}
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return path, query, raw, "application/json", hasPathIDs, shared
	}
	if mt := content.Get("multipart/form-data"); mt != nil {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		if mt.Schema != nil && mt.Schema.Value != nil {
			for name, ps := range mt.Schema.Value.Properties {
				if ps.Value != nil && ps.Value.Format == "binary" {
					fw, _ := mw.CreateFormFile(name, "sweep.txt")
					_, _ = fw.Write([]byte("sweep evidence\n"))
					continue
				}
				if v := sweepValue(t, o, name, ps, set, 1); v != nil {
					_ = mw.WriteField(name, fmt.Sprint(v))
				}
			}
		}
		_ = mw.Close()
		return path, query, buf.Bytes(), mw.FormDataContentType(), hasPathIDs, shared
	}
	return path, query, []byte("{}"), "application/json", hasPathIDs, shared
}

// sweepValue generates a value for a schema: required properties and every
// id reference (filled with the fixture set's ids), enums take their first
// value, formats a valid example.
func sweepValue(t *testing.T, o sweepOp, name string, ref *openapi3.SchemaRef, set sweepFixtureSet, depth int) any {
	if ref == nil || ref.Value == nil || depth > 6 {
		return nil
	}
	s := ref.Value
	if name != "" && (strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "Ids")) {
		if f, ok := sweepKind(name); ok {
			if s.Type.Is("array") {
				return []string{set.ids[f.kind]}
			}
			return set.ids[f.kind]
		}
	}
	if s.Example != nil {
		return s.Example
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.AllOf) > 0 {
		merged := &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: openapi3.Schemas{}}
		for _, part := range s.AllOf {
			if part.Value == nil {
				continue
			}
			for k, v := range part.Value.Properties {
				merged.Properties[k] = v
			}
			merged.Required = append(merged.Required, part.Value.Required...)
		}
		return sweepValue(t, o, name, openapi3.NewSchemaRef("", merged), set, depth+1)
	}
	if len(s.OneOf) > 0 {
		return sweepValue(t, o, name, s.OneOf[0], set, depth+1)
	}
	switch {
	case s.Type.Is("object") || len(s.Properties) > 0:
		m := map[string]any{}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for pn, ps := range s.Properties {
			isRef := strings.HasSuffix(pn, "Id") || strings.HasSuffix(pn, "Ids")
			if _, known := sweepKind(pn); isRef && !known {
				isRef = false
			}
			if !required[pn] && !isRef {
				continue
			}
			if ps.Value != nil && ps.Value.ReadOnly {
				continue
			}
			if v := sweepValue(t, o, pn, ps, set, depth+1); v != nil {
				m[pn] = v
			}
		}
		return m
	case s.Type.Is("array"):
		item := sweepValue(t, o, "", s.Items, set, depth+1)
		if item == nil {
			return []any{}
		}
		return []any{item}
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min != nil {
			return *s.Min
		}
		return 1
	case s.Type.Is("boolean"):
		return true
	case s.Type.Is("string"):
		switch s.Format {
		case "email":
			return "sweep@example.com"
		case "uri", "url":
			return "https://example.com/sweep"
		case "date":
			return "2026-06-30"
		case "date-time":
			return "2026-06-30T12:00:00Z"
		}
		return "Sweep"
	}
	return nil
}

// sweepDo sends a request with a content type of its own.
func (e *testEnv) sweepDo(method, path, query, key string, body []byte, contentType string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	if query != "" {
		path += "?" + query
	}
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(method, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	r.Header.Set("X-API-Key", key)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, r)
	return rec
}

// TestCrossOrganizationSweep walks every operation of the OpenAPI document:
//   - with organization A's own key, every GET that names A's resources
//     answers 2xx (the fixtures are real, so the 404s below mean something);
//   - with organization B's owner key, every operation that names one of A's
//     resources in its path is 404 not_found, and every other operation
//     answers without a single id of A (a write whose body references A's
//     resources must refuse or drop them; an error may echo the input);
//   - with B's key and X-Organization-Id of A, every authenticated
//     operation is 404;
//   - with A's auditor key, every write is 403 forbidden.
func TestCrossOrganizationSweep(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	orgA := e.org("Sweep A", app.PlanEnterprise)
	orgB := e.org("Sweep B", app.PlanEnterprise)
	a := e.sweepFixtures(orgA)
	e.sweepFixtures(orgB) // B has resources of its own, so a leak is not hidden by an empty register
	ownerA, auditorA := e.key(orgA, app.RoleOwner), e.key(orgA, app.RoleAuditor)
	ownerB := e.key(orgB, app.RoleOwner)
	secretsA := []string{orgA}
	for _, id := range a.ids {
		secretsA = append(secretsA, id)
	}

	ops := loadSweepOps(t, e)
	var swept, notFound, forbidden, leakChecked, crossHeader int
	for _, o := range ops {
		path, query, body, ct, hasIDs, shared := sweepRequest(t, o, a)
		write := o.method != http.MethodGet && o.method != http.MethodHead
		t.Run(o.name(), func(t *testing.T) {
			swept++
			// Positive control: A reads its own resources.
			if !write && hasIDs && !o.public() {
				rec := e.sweepDo(o.method, path, query, ownerA, nil, "")
				if rec.Code < 200 || rec.Code > 299 {
					t.Errorf("A's own key: status %d, want 2xx (fixture not real?): %s", rec.Code, rec.Body.String())
				}
			}
			// B names A's organization explicitly.
			if !o.public() {
				rec := e.sweepDo(o.method, path, query, ownerB, body, ct, "X-Organization-Id", orgA)
				if rec.Code != http.StatusNotFound {
					t.Errorf("B's key with X-Organization-Id of A: status %d, want 404: %s", rec.Code, rec.Body.String())
				}
				crossHeader++
			}
			// B uses A's ids.
			rec := e.sweepDo(o.method, path, query, ownerB, body, ct)
			switch {
			case rec.Code >= 500:
				t.Errorf("B's key: status %d: %s", rec.Code, rec.Body.String())
			case hasIDs && !shared:
				if rec.Code != http.StatusNotFound {
					t.Errorf("B's key on A's resource: status %d, want 404: %s", rec.Code, rec.Body.String())
				} else {
					wantError(t, rec, http.StatusNotFound, "not_found")
					notFound++
				}
			case hasIDs && shared:
				// Every organization may read it (a catalog, a public portal).
			default:
				// A 2xx may carry no id of A at all (a write that names A's
				// resources in its body must refuse them or drop them, never
				// link to them); an error may echo what the client sent.
				for _, id := range secretsA {
					if !strings.Contains(rec.Body.String(), id) || strings.Contains(query, id) {
						continue
					}
					if rec.Code < 400 {
						t.Errorf("B's key: %d response carries A's id %s: %s", rec.Code, id, rec.Body.String())
					} else if !bytes.Contains(body, []byte(id)) {
						t.Errorf("B's key: error leaks A's id %s: %s", id, rec.Body.String())
					}
				}
				leakChecked++
			}
			// A's auditor key may not write.
			if write && !o.public() {
				if _, ok := sweepNotWrites[o.name()]; !ok {
					rec := e.sweepDo(o.method, path, query, auditorA, body, ct)
					wantError(t, rec, http.StatusForbidden, "forbidden")
					forbidden++
				}
			}
		})
	}
	// The fixtures of A survive the sweep: nothing B or the auditor did
	// touched them.
	if _, err := e.app.GetVendor(e.ctx(orgA), a.ids["vendor"]); err != nil {
		t.Errorf("A's vendor after the sweep: %v", err)
	}
	keys, err := e.app.ListAPIKeys(e.ctx(orgA))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.RevokedAt != nil {
			t.Errorf("A's key %s was revoked during the sweep", k.ID)
		}
	}
	t.Logf("routes swept: %d operations; 404 on A's resources: %d; 404 with X-Organization-Id of A: %d; leak-checked: %d; auditor 403: %d",
		swept, notFound, crossHeader, leakChecked, forbidden)
}
