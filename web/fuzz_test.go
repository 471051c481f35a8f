package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// The fuzz targets assert one property of hostile input: no panic and no
// 5xx. Seed corpora live in testdata/fuzz/<Target>; `make fuzz` runs each
// target for FUZZTIME and `make test` runs a short pass within the CI
// budget.
//
// FuzzWebhookSignature puts the receiver-side signature check under the
// fuzzer: raw body, secret and X-Service-Signature header as inputs.

// fuzzBodyRoutes are the create and update operations that take a JSON body.
// Adding a route here puts its decoder and validation under the fuzzer.
var fuzzBodyRoutes = []struct{ method, path string }{
	{"POST", "/v1/vendors"},
	{"PATCH", "/v1/vendors/{vendor}"},
	{"POST", "/v1/people"},
	{"POST", "/v1/people/bulk"},
	{"PATCH", "/v1/people/{person}"},
	{"POST", "/v1/people/{person}/devices"},
	{"PATCH", "/v1/organization"},
	{"PATCH", "/v1/organization/branding"},
	{"POST", "/v1/api-keys"},
	{"POST", "/v1/organization/transfer-ownership"},
}

// decodeTargets are the body types of those routes, for the decoder-only
// target (fast: no database).
var decodeTargets = []func() any{
	func() any { return &app.VendorInput{} },
	func() any { return &app.PersonCreate{} },
	func() any { return &app.PersonPatch{} },
	func() any { return &struct{ Members []app.PersonCreate }{} },
	func() any { return &app.DeviceLink{} },
	func() any { return &app.OrganizationPatch{} },
	func() any { return &app.BrandingPatch{} },
	func() any { return &app.APIKeyCreate{} },
}

var jsonSeeds = []string{
	`{"name":"Acme","category":"Cloud","country":"us","processesPersonalData":true,"transferMechanism":"SCC"}`,
	`{"name":"Acme","residualProbability":null,"subProcessors":[{"name":"x","country":"DE","purpose":"p"}]}`,
	`{"name":"","inherentImpact":"severe","nextReviewDue":"2026-02-30","dpaSignedAt":"2026-01-01T00:00:00Z"}`,
	`{"email":"a@example.com","name":"A","role":"admin","department":"IT"}`,
	`{"members":[{"email":"b@example.com","name":"B"},{"email":"b@example.com","name":"B"}]}`,
	`{"isActive":false,"jobTitle":null,"role":"owner"}`,
	`{"deviceId":"dev_01JABCDEFGHJKMNPQRSTVWXYZ0"}`,
	`{"name":"Laptop","hostname":"h","platform":"linux","osVersion":"6.1"}`,
	`{"slug":"acme-corp","website":"https://example.com"}`,
	`{"primaryColor":"#AABBCC","logoUrl":"javascript:alert(1)","displayName":null}`,
	`{"name":"ci","role":"auditor","expiresIn":"-5h"}`,
	`{"name":"ci","role":"admin","expiresAt":"9999-12-31T23:59:59Z"}`,
	`{"newOwnerId":"usr_01JABCDEFGHJKMNPQRSTVWXYZ0"}`,
	`{"name":1e400}`, `{"name":"\ud800"}`, `{"a":` + strings.Repeat(`[`, 200), `[]`, `null`, `{}{}`, `{"name":"x"} trailing`,
	`{"subProcessors":[` + strings.Repeat(`{"name":"x","country":"DE","purpose":"p"},`, 20) + `{}]}`,
}

// FuzzDecode feeds arbitrary bytes to the JSON decoder for every body
// type: every failure must be a 4xx naming what is wrong.
func FuzzDecode(f *testing.F) {
	for i, s := range jsonSeeds {
		f.Add(uint8(i), []byte(s))
	}
	s := &Server{}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		dst := decodeTargets[int(which)%len(decodeTargets)]()
		if err := httpx.DecodeBytes(body, dst); err != nil {
			if status, _, _, _ := s.Classify(err); status >= 500 {
				t.Fatalf("decode %q: status %d: %v", body, status, err)
			}
		}
	})
}

// fuzzEnv is a test server with one organization, an owner key and one
// resource of each kind the body routes address.
type fuzzEnv struct {
	srv    *Server
	clock  *fakeClock
	key    string
	vendor string
	person string
}

func newFuzzEnv(tb testing.TB) *fuzzEnv {
	dir := tb.TempDir()
	ctx := context.Background()
	db := openMigrated(tb, filepath.Join(dir, "fuzz.db"))
	clock := &fakeClock{t: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The limiter runs on every request; its ceiling is high so that long fuzz
	// and benchmark runs measure handlers, not 429s.
	a := app.New(db, clock.Now, log, app.Config{EnterpriseRate: 1 << 30, EnterpriseBurst: 1 << 30})
	srv, err := New(a, log, Options{Version: "fuzz", Health: db.Ping, Now: clock.Now, MaxUploadBytes: 1 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	o, err := a.CreateOrganization(ctx, "Fuzz", app.PlanEnterprise)
	if err != nil {
		tb.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	k, err := a.CreateAPIKey(sys, app.APIKeyCreate{Name: "fuzz", Role: string(app.RoleOwner)})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := a.CreatePerson(sys, app.PersonCreate{Name: "Fuzz", Email: "fuzz@example.com", Role: string(app.RoleAdmin)})
	if err != nil {
		tb.Fatal(err)
	}
	v, err := a.CreateVendor(sys, app.VendorInput{Name: app.Ptr("Fuzz vendor")})
	if err != nil {
		tb.Fatal(err)
	}
	return &fuzzEnv{srv: srv, clock: clock, key: k.Key, vendor: v.ID, person: p.ID}
}

// serve sends one request; the clock moves a minute each time so the rate
// limit never masks a handler.
func (fe *fuzzEnv) serve(t *testing.T, req *http.Request) *httptest.ResponseRecorder {
	fe.clock.Advance(time.Minute)
	req.Header.Set("X-API-Key", fe.key)
	rec := httptest.NewRecorder()
	fe.srv.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s: status %d: %s", req.Method, req.URL, rec.Code, rec.Body.String())
	}
	return rec
}

// FuzzBodies sends arbitrary bodies through the full handler chain of every
// create and update route: decoding, validation, storage. No 5xx, no panic.
func FuzzBodies(f *testing.F) {
	for i, s := range jsonSeeds {
		f.Add(uint8(i), []byte(s))
	}
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		rt := fuzzBodyRoutes[int(which)%len(fuzzBodyRoutes)]
		path := strings.NewReplacer("{vendor}", fe.vendor, "{person}", fe.person).Replace(rt.path)
		req := httptest.NewRequest(rt.method, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		fe.serve(t, req)
	})
}

// FuzzQuery sends arbitrary query strings to every list route and checks
// the parsers' invariants directly.
func FuzzQuery(f *testing.F) {
	for _, q := range []string{"page=2&perPage=10", "limit=200", "perPage=201", "page=0", "page=-1", "page=99999999999999999999",
		"perPage=1e3", "criticality=critical&ictService=true&processesPersonalData=false", "dataProcessing=yes",
		"category=Software%20as%20a%20Service&country=de&sort=-riskScore", "sort=name;DROP TABLE vendors", "q=%25_%27",
		"archived=true&status=assessed&dpaStatus=pending&assigneeId=usr_x", "role=owner&includeInactive=true", "personId=%00",
		"page=%zz", "sort=-", "sort=--name", "country=ÄÖ", "q=" + strings.Repeat("a", 3000)} {
		f.Add(q)
	}
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, raw string) {
		u := &url.URL{Path: "/v1/vendors", RawQuery: raw}
		r := &http.Request{Method: "GET", URL: u, Header: http.Header{}}
		if p, err := httpx.PageParams(r); err == nil {
			if p.Page < 1 || p.Page > httpx.MaxPage || p.PerPage < 1 || p.PerPage > app.MaxPerPage {
				t.Fatalf("pageParams(%q) = %+v accepted out of range", raw, p)
			}
		} else if status, _, _, _ := fe.srv.Classify(err); status != http.StatusBadRequest {
			t.Fatalf("pageParams(%q): status %d", raw, status)
		}
		for _, name := range []string{"ictService", "archived", "processesPersonalData"} {
			b, err := httpx.BoolParam(r, name)
			if err == nil && b != nil && *b != (u.Query().Get(name) == "true") {
				t.Fatalf("boolParam(%q, %s) = %v", raw, name, *b)
			}
		}
		for _, path := range []string{"/v1/vendors", "/v1/people", "/v1/devices", "/v1/api-keys"} {
			req := httptest.NewRequest("GET", path, nil)
			req.URL.RawQuery = raw
			fe.serve(t, req)
		}
	})
}

// FuzzWebhookSignature: app.VerifyWebhookSignature never panics, accepts
// exactly the HMAC the sender (app.SignWebhook, what the delivery worker
// sends) computes for that secret and body, in either hex case, and
// refuses it for any other body or secret.
func FuzzWebhookSignature(f *testing.F) {
	f.Add("whsec_abc", []byte(`{"id":"evt_1","event":"vendor.created","timestamp":"2026-01-15T10:00:00Z","data":{"id":"vnd_1"}}`), "")
	f.Add("", []byte{}, "00")
	f.Add("s", []byte("x"), strings.Repeat("g", 64))
	f.Add("secret", []byte("body"), strings.Repeat("A", 64))
	f.Fuzz(func(t *testing.T, secret string, body []byte, header string) {
		want := app.SignWebhook(secret, body)
		got := app.VerifyWebhookSignature(secret, body, header)
		if got != strings.EqualFold(header, want) {
			t.Fatalf("verify(%q) = %v; the sender's signature is %s", header, got, want)
		}
		if !app.VerifyWebhookSignature(secret, body, want) || !app.VerifyWebhookSignature(secret, body, strings.ToUpper(want)) {
			t.Fatal("the sender's own signature is refused")
		}
		if app.VerifyWebhookSignature(secret, append(append([]byte{}, body...), 'x'), want) {
			t.Fatal("a tampered body is accepted")
		}
		if app.VerifyWebhookSignature(secret+"x", body, want) {
			t.Fatal("another secret is accepted")
		}
	})
}
