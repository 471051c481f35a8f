package web

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestCollectFilesAfterDelete: the daily file collection removes the stored
// content of deleted evidence once nothing has referred to it for the grace
// period, and never content another record still uses.
func TestCollectFilesAfterDelete(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	ctl := e.firstControl(key)
	upload := func(content string) (id, sum string) {
		t.Helper()
		rec := e.upload("/v1/controls/"+ctl+"/evidence", key, "f.txt", []byte(content), nil)
		wantStatus(t, rec, http.StatusCreated)
		ev := obj(t, rec)
		return ev["id"].(string), ev["sha256"].(string)
	}
	shared1, _ := upload("shared content")
	shared2, _ := upload("shared content")
	alone, aloneSum := upload("deleted content")
	kept, _ := upload("kept content")
	for _, id := range []string{shared1, alone} {
		wantStatus(t, e.do("DELETE", "/v1/evidence/"+id, key, nil), http.StatusNoContent)
	}
	// Two sweeps more than the grace period after the uploads: the first
	// marks what nothing refers to, the second (a grace period later)
	// removes it.
	e.clock.t = time.Now().Add(3 * app.FileGrace)
	res, err := e.app.CollectFiles(e.ctx(org))
	if err != nil || res.Removed != 0 {
		t.Fatalf("first collection: %+v %v", res, err)
	}
	res, err = e.app.CollectFiles(e.ctx(org))
	if err != nil || res.Removed != 1 || res.Bytes != int64(len("deleted content")) {
		t.Fatalf("second collection: %+v %v", res, err)
	}
	for id, want := range map[string]string{shared2: "shared content", kept: "kept content"} {
		rec := e.do("GET", "/v1/evidence/"+id+"/download", key, nil)
		wantStatus(t, rec, http.StatusOK)
		if !bytes.Equal(rec.Body.Bytes(), []byte(want)) {
			t.Fatalf("%s: %q", id, rec.Body.String())
		}
	}
	refs, err := e.db.FileReferences(e.ctx(org))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := refs[aloneSum]; ok || len(refs) != 2 {
		t.Fatalf("references: %v", refs)
	}
	// The same content uploaded again is stored afresh and served.
	again, _ := upload("deleted content")
	rec := e.do("GET", "/v1/evidence/"+again+"/download", key, nil)
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != "deleted content" {
		t.Fatalf("again: %q", rec.Body.String())
	}
}
