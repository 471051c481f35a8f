package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestTrustPortalShowsRealFrameworkScore: with the frameworks service as the
// trust portal's source, an enabled framework chosen in the settings shows
// its real score and control counts on the public page and in its JSON;
// a framework not chosen, or not enabled, does not show.
func TestTrustPortalShowsRealFrameworkScore(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	e.app.SetTrustComplianceSource(e.app.FrameworkTrustSource())
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	enablePortal(t, e, admin, "acme")
	e.enable(admin, "iso27001-2022")
	e.enable(admin, "soc2-2017")

	// Implement some of ISO 27001's controls (a completed evidence task
	// with evidence); the first gets its task done without evidence, so it
	// is in progress.
	ctls := list(t, e.do("GET", "/v1/controls?frameworkId=iso27001-2022&perPage=4", admin, nil))
	for i, c := range ctls {
		tid := e.create("/v1/tasks", admin, map[string]any{"title": "Collect evidence", "controlId": c["id"]})["id"].(string)
		if i > 0 {
			wantStatus(t, e.upload("/v1/tasks/"+tid+"/evidence", admin, "proof.pdf", []byte("%PDF proof"), nil), http.StatusCreated)
		}
		wantStatus(t, e.do("POST", "/v1/tasks/"+tid+"/complete", admin, nil), http.StatusOK)
	}
	fw := obj(t, e.do("GET", "/v1/frameworks/iso27001-2022", admin, nil))
	score := fw["score"].(float64)
	counts := fw["counts"].(map[string]any)
	total := counts["controlTotal"].(float64)
	implemented := counts["controls"].(map[string]any)["implemented"].(float64)
	if score <= 0 || implemented != float64(len(ctls)-1) {
		t.Fatalf("framework after implementing controls: score %v, counts %v", score, counts)
	}

	// Nothing chosen yet: nothing published.
	m := obj(t, e.do("GET", "/v1/trust/acme", "", nil))
	if m["frameworksPublished"] != false || len(m["frameworks"].([]any)) != 0 {
		t.Fatalf("no framework chosen, none may show: %v", m["frameworks"])
	}
	// Chosen by slug (as the settings document) and by id both work;
	// nist (not enabled) is ignored.
	wantStatus(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"frameworks": []string{"iso27001-2022", "nist-csf-2"}}), http.StatusOK)
	m = obj(t, e.do("GET", "/v1/trust/acme", "", nil))
	fws := m["frameworks"].([]any)
	if m["frameworksPublished"] != true || len(fws) != 1 {
		t.Fatalf("published frameworks: %v", fws)
	}
	got := fws[0].(map[string]any)
	if got["id"] != fw["id"] || got["slug"] != "iso27001-2022" || got["name"] != fw["name"] || got["score"] != score ||
		got["controlsTotal"] != total || got["controlsImplemented"] != implemented || got["controlsInProgress"] != float64(1) || got["controls"] != nil {
		t.Fatalf("trust framework %v, want the framework's %v %v", got, score, counts)
	}
	page := e.do("GET", "/trust/acme", "", nil).Body.String()
	if !strings.Contains(page, fw["name"].(string)) || !strings.Contains(page, fmt.Sprintf("%.0f%%", score)) ||
		!strings.Contains(page, fmt.Sprintf("%.0f of %.0f (1 in progress)", implemented, total)) || strings.Contains(page, "SOC 2") {
		t.Fatalf("page frameworks: %s", page)
	}

	// By id, with controls shown: the implemented ones are listed.
	wantStatus(t, e.do("PATCH", "/v1/trust-portal/settings", admin, map[string]any{"frameworks": []string{fw["id"].(string)}, "showControls": true}), http.StatusOK)
	m = obj(t, e.do("GET", "/v1/trust/acme", "", nil))
	got = m["frameworks"].([]any)[0].(map[string]any)
	cs := got["controls"].([]any)
	if float64(len(cs)) != total || got["score"] != score {
		t.Fatalf("controls shown: %d, want %v", len(cs), total)
	}
	n := 0
	for _, c := range cs {
		if c.(map[string]any)["status"] == "implemented" {
			n++
		}
	}
	if float64(n) != implemented {
		t.Fatalf("%d implemented controls listed, want %v", n, implemented)
	}
}
