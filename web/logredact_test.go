package web

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

func TestLoggedPathRedactsLinkTokens(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/vendor-questionnaire/qt_abc":                    "/vendor-questionnaire/[redacted]",
		"/v1/vendor-questionnaire/qt_abc":                 "/v1/vendor-questionnaire/[redacted]",
		"/trust/acme/access/ta_abc":                       "/trust/acme/access/[redacted]",
		"/trust/acme/access/ta_abc/nda":                   "/trust/acme/access/[redacted]/nda",
		"/v1/trust-access/nda/ta_abc/sign":                "/v1/trust-access/nda/[redacted]/sign",
		"/v1/trust-access/access/ta_abc/documents/tdoc_1": "/v1/trust-access/access/[redacted]/documents/tdoc_1",
		"/v1/vendors/vnd_1":                               "/v1/vendors/vnd_1",
		"/trust/acme":                                     "/trust/acme",
		"/v1/trust-access/acme/requests":                  "/v1/trust-access/acme/requests",
		"/questionnaires/qst_1/send":                      "/questionnaires/qst_1/send",
	} {
		if got := httpx.LoggedPath(in); got != want {
			t.Errorf("loggedPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVendorLinkNotLogged: the access log of sending a questionnaire and
// of the vendor opening the link never holds the token.
func TestVendorLinkNotLogged(t *testing.T) {
	t.Parallel()
	logs := &redactLogBuffer{}
	e := newTestServerLogged(t, nil, slog.New(slog.NewTextHandler(logs, nil)))
	f := e.uiFixture("Acme")
	b := e.browser()
	b.signIn(f.admin)
	rec := b.post("/vendors/"+f.vendor+"/questionnaires", map[string][]string{"source": {"template:vendor-security-baseline"}})
	wantStatus(t, rec, http.StatusCreated)
	token := sentToken(t, rec, rec.Body.String())
	wantStatus(t, e.do("GET", "/vendor-questionnaire/"+token, "", nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/v1/vendor-questionnaire/"+token, "", nil), http.StatusOK)
	logged := logs.String()
	if !strings.Contains(logged, "/vendor-questionnaire/[redacted]") {
		t.Fatalf("the vendor's requests were not logged: %s", logged)
	}
	if strings.Contains(logged, token[3:]) {
		t.Fatal("the vendor link's token is in the log")
	}
	audit, err := e.app.ListAuditLog(e.ctx(f.org), app.AuditFilter{ResourceType: "questionnaire", Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil || audit.Total == 0 {
		t.Fatalf("audit: %v", err)
	}
	for _, rcd := range audit.Items {
		raw, err := json.Marshal(rcd)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), token[3:]) {
			t.Fatal("the token is in the audit trail")
		}
	}
}

// redactLogBuffer collects log lines from concurrent requests.
type redactLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *redactLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *redactLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
