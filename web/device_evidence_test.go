package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// TestDeviceEvidenceMovesControlAndScore: a compliant fleet becomes a
// Markdown and a JSON evidence file on the ISO 27001 A.8.1 control, the
// control becomes implemented and the score rises; once the fleet drops
// below the threshold the evidence is withdrawn, the task says why and the
// control leaves implemented.
func TestDeviceEvidenceMovesControlAndScore(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Fleet Co", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	wantStatus(t, e.do("POST", "/v1/frameworks/iso27001-2022/enable", admin, nil), http.StatusOK)
	reqID, ok := app.ResolveTrainingControl(app.TrainingControlRef{Framework: "iso27001-2022", Ref: "A.8.1"})
	if !ok {
		t.Fatal("A.8.1 does not resolve")
	}
	for _, ref := range app.DeviceEvidenceControls {
		if _, ok := app.ResolveTrainingControl(ref); !ok {
			t.Fatalf("%s %s is not an assessable requirement of the catalog", ref.Framework, ref.Ref)
		}
	}
	links, err := e.db.OrgRequirementControls(e.ctx(org), org)
	if err != nil || len(links[reqID]) == 0 {
		t.Fatalf("no control serves A.8.1: %v", err)
	}
	controlID := links[reqID][0]
	score := func() int {
		s, _, err := e.app.FrameworkScore(e.ctx(org), "iso27001-2022")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	status := func() string {
		c, err := e.app.GetControl(e.ctx(org), controlID)
		if err != nil {
			t.Fatal(err)
		}
		return c.Status
	}
	refresh := func() {
		t.Helper()
		if _, err := e.app.RefreshDeviceEvidence(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// No devices: nothing is attached.
	refresh()
	if ev := list(t, e.do("GET", "/v1/controls/"+controlID+"/evidence", admin, nil)); len(ev) != 0 {
		t.Fatalf("evidence without devices: %v", ev)
	}
	before := score()
	dev1, tok1 := enrol(t, e, org, "SER-E1")
	dev2, tok2 := enrol(t, e, org, "SER-E2")
	now := e.clock.Now()
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev1, now), "X-Device-Token", tok1), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev2, now), "X-Device-Token", tok2), http.StatusCreated)
	refresh()
	if s := status(); s != app.ControlImplemented {
		t.Fatalf("compliant fleet: control %s", s)
	}
	ev := list(t, e.do("GET", "/v1/controls/"+controlID+"/evidence", admin, nil))
	if len(ev) != 2 {
		t.Fatalf("evidence: %v", ev)
	}
	var md, js string
	for _, x := range ev {
		if x["expiresAt"] == nil || !strings.Contains(fmt.Sprint(x["description"]), "2 of 2 devices compliant") {
			t.Fatalf("evidence item: %v", x)
		}
		rec := e.do("GET", "/v1/evidence/"+x["id"].(string)+"/download", admin, nil)
		wantStatus(t, rec, http.StatusOK)
		if strings.HasSuffix(x["filename"].(string), ".md") {
			md = rec.Body.String()
		} else {
			js = rec.Body.String()
		}
	}
	if !strings.Contains(md, "# Device compliance") || !strings.Contains(md, dev1) || !strings.Contains(md, "| disk_encryption | 2 | 2 |") {
		t.Fatalf("summary:\n%s", md)
	}
	var rep app.DeviceFleetReport
	if err := json.Unmarshal([]byte(js), &rep); err != nil || rep.Total != 2 || rep.Compliant != 2 || len(rep.Devices) != 2 ||
		len(rep.Devices[0].Checks) != len(app.DeviceCheckTypes) || !rep.MeetsTarget {
		t.Fatalf("detail %v: %s", err, js)
	}
	after := score()
	if after <= before {
		t.Fatalf("score %d -> %d", before, after)
	}
	// The next day the same fleet replaces, not adds, the evidence.
	e.clock.Advance(24 * time.Hour)
	now = e.clock.Now()
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev1, now), "X-Device-Token", tok1), http.StatusCreated)
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev2, now, app.CheckDiskEncryption), "X-Device-Token", tok2), http.StatusCreated)
	refresh()
	// One of two compliant is below the threshold: no evidence, the task
	// says why, the control and the score drop back.
	if ev := list(t, e.do("GET", "/v1/controls/"+controlID+"/evidence", admin, nil)); len(ev) != 0 {
		t.Fatalf("evidence below the threshold: %v", ev)
	}
	if s := status(); s == app.ControlImplemented {
		t.Fatalf("non-compliant fleet: control %s", s)
	}
	tasks := list(t, e.do("GET", "/v1/tasks?controlId="+controlID, admin, nil))
	found := false
	for _, tk := range tasks {
		if tk["title"] == "Device compliance" {
			found = true
			if tk["status"] == app.TaskDone || !strings.Contains(fmt.Sprint(tk["description"]), "1 of 2 devices compliant") ||
				!strings.Contains(fmt.Sprint(tk["description"]), "no evidence is attached") {
				t.Fatalf("task below the threshold: %v", tk)
			}
		}
	}
	if !found {
		t.Fatalf("no device compliance task: %v", tasks)
	}
	if s := score(); s >= after {
		t.Fatalf("score did not drop: %d -> %d", after, s)
	}
	// Back to compliant: the evidence returns.
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev2, now), "X-Device-Token", tok2), http.StatusCreated)
	refresh()
	if s := status(); s != app.ControlImplemented {
		t.Fatalf("fleet compliant again: control %s", s)
	}
	// Another organization's fleet is not in this organization's evidence.
	other := e.org("Other", app.PlanProfessional)
	wantStatus(t, e.do("POST", "/v1/frameworks/iso27001-2022/enable", e.key(other, app.RoleAdmin), nil), http.StatusOK)
	refresh()
	if ev := list(t, e.do("GET", "/v1/controls/"+controlID+"/evidence", admin, nil)); len(ev) != 2 {
		t.Fatalf("evidence after another org's refresh: %v", ev)
	}
}

// TestDeviceNonCompliantNotification: a check-in that makes a device
// non-compliant tells its person and the admins; compliant again tells
// nobody.
func TestDeviceNonCompliantNotification(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Notify Co", app.PlanProfessional)
	adaID, ada := e.personKey(org, "ada@example.com", app.RoleEmployee)
	olgaID := e.person(org, "olga@example.com", app.RoleOwner)
	if _, err := e.app.Notify(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := e.do("POST", "/v1/device-agent/register", ada, map[string]any{"name": "Ada's laptop", "hostname": "ada-1", "platform": "linux", "osVersion": "Debian 12"})
	wantStatus(t, rec, http.StatusCreated)
	dev, tok := obj(t, rec)["deviceId"].(string), obj(t, rec)["deviceToken"].(string)
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev, e.clock.Now(), app.CheckFirewall), "X-Device-Token", tok), http.StatusCreated)
	if _, err := e.app.Notify(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{adaID, olgaID} {
		ns, err := e.db.ListNotifications(e.ctx(org), org, id, 10)
		if err != nil || len(ns) != 1 || ns[0].Kind != app.NotifyDeviceNonCompliant || !strings.Contains(ns[0].Body, "firewall") ||
			ns[0].Link != "/devices/"+dev {
			t.Fatalf("notifications of %s (%v): %+v", id, err, ns)
		}
	}
	wantStatus(t, e.do("POST", "/v1/device-agent/check-in", "", checks(dev, e.clock.Now()), "X-Device-Token", tok), http.StatusCreated)
	if n, err := e.app.Notify(context.Background()); err != nil || n != 0 {
		t.Fatalf("compliant again: %d notifications (%v)", n, err)
	}
}
