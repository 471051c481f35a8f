package web

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/mux"
)

// TestOpenAPIMatchesRouter proves the router's routes and the document's
// operations are the same set, and that the document is valid OpenAPI 3.0.
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	rec := e.do("GET", "/v1/openapi.json", "", nil)
	wantStatus(t, rec, http.StatusOK)

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("load document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("invalid OpenAPI document: %v", err)
	}
	found := false
	for _, s := range doc.Servers {
		found = found || s.URL == "http://localhost:3333"
	}
	if !found {
		t.Error("servers must include http://localhost:3333")
	}

	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	routed := map[string]bool{}
	err = e.srv.Router().Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			routed[m+" "+tpl] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var missingDoc, missingRoute []string
	for r := range routed {
		if !documented[r] {
			missingDoc = append(missingDoc, r)
		}
	}
	for d := range documented {
		if !routed[d] {
			missingRoute = append(missingRoute, d)
		}
	}
	sort.Strings(missingDoc)
	sort.Strings(missingRoute)
	if len(missingDoc) > 0 {
		t.Errorf("routes missing from the OpenAPI document: %v", missingDoc)
	}
	if len(missingRoute) > 0 {
		t.Errorf("documented operations with no route: %v", missingRoute)
	}
	if len(routed) == 0 {
		t.Fatal("no routes found")
	}
	var raw map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
}
