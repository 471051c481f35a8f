package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestUIAssistantPage asks through the page's form (no JavaScript): the
// answer and its sources as links show on the conversation; another
// person cannot open it; an empty question is a form error; ending stops it.
func TestUIAssistantPage(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	f := e.uiFixture("Assist")
	if _, err := e.app.CreateVendor(e.ctx(f.org), app.VendorInput{Name: app.Ptr("Cloudy Analytics"), Country: app.Some("US"),
		ProcessesPersonalData: app.Ptr(true), TransferMechanism: app.Some("scc")}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(f.owner)
	rec := b.get("/assistant")
	wantStatus(t, rec, http.StatusOK)
	body := rec.Body.String()
	for _, want := range []string{"<h1>Assistant</h1>", `href="/assistant"`, "Ask in a new conversation", "no language model is configured"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, " onclick=") {
		t.Error("inline script on the page")
	}
	rec = b.post("/assistant", url.Values{"new": {"1"}, "text": {"Which vendors process personal data outside the EU?"}})
	wantStatus(t, rec, http.StatusSeeOther)
	loc := rec.Header().Get("Location")
	if !strings.HasPrefix(loc, "/assistant?session=asn_") {
		t.Fatalf("redirect to %q", loc)
	}
	sid := strings.TrimSuffix(strings.TrimPrefix(loc, "/assistant?session="), "#latest")
	rec = b.get(strings.TrimSuffix(loc, "#latest"))
	wantStatus(t, rec, http.StatusOK)
	body = rec.Body.String()
	for _, want := range []string{"Which vendors process personal data outside the EU?", "1 vendors that process personal data and are outside the EU/EEA:",
		`<a href="/vendors/vnd_`, "Sources (1)", `id="latest"`, "End conversation"} {
		if !strings.Contains(body, want) {
			t.Errorf("conversation lacks %q: %s", want, body)
		}
	}
	// A follow-up in the same conversation.
	rec = b.post("/assistant", url.Values{"session": {sid}, "text": {"What are our framework scores?"}})
	wantStatus(t, rec, http.StatusSeeOther)
	// An empty question is a form error, not a stored message.
	rec = b.post("/assistant", url.Values{"session": {sid}, "text": {"  "}})
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if !strings.Contains(rec.Body.String(), "text is required") {
		t.Errorf("form error missing: %s", rec.Body.String())
	}
	// Another person (the admin) cannot open it.
	other := e.browser()
	other.signIn(f.admin)
	if rec := other.get("/assistant?session=" + sid); rec.Code != http.StatusNotFound {
		t.Errorf("admin opened the owner's conversation: %d", rec.Code)
	}
	if rec := other.post("/assistant", url.Values{"session": {sid}, "text": {"hi"}}); rec.Code != http.StatusNotFound {
		t.Errorf("admin asked in the owner's conversation: %d", rec.Code)
	}
	// Employees and auditors (as people) use it too.
	for _, who := range []string{f.employee, f.auditor} {
		p := e.browser()
		p.signIn(who)
		rec := p.post("/assistant", url.Values{"new": {"1"}, "text": {"Which tasks are overdue?"}})
		wantStatus(t, rec, http.StatusSeeOther)
	}
	// Ending.
	wantStatus(t, b.post("/assistant/"+sid+"/end", url.Values{}), http.StatusSeeOther)
	rec = b.get("/assistant?session=" + sid)
	if !strings.Contains(rec.Body.String(), "This conversation has ended.") {
		t.Error("ended conversation still offers the form")
	}
	rec = b.post("/assistant", url.Values{"session": {sid}, "text": {"more"}})
	wantStatus(t, rec, http.StatusConflict)
}
