package ui

import (
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiCloudSecurityRoutes registers the cloud security overview: findings
// of cloud connections by severity and service, a chart of failing
// resources over the scans, filters and the exceptions. Auditors read;
// owners and admins may start a scan.
func (s *Server) uiCloudSecurityRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/cloud-security", uiSignedIn, s.uiCloudSecurity)
	page("POST", "/cloud-security/scan", uiManage, s.uiCloudScan)
}

func init() {
	flashes["cloud-scan-queued"] = "Scan queued: it starts within moments. Reload to see its findings."
}

type cloudCount struct {
	Key   string
	Count int
}

func (s *Server) uiCloudSecurity(w http.ResponseWriter, r *http.Request, v *view) error {
	q := r.URL.Query()
	f := app.CloudFindingFilter{ConnectionID: strings.TrimSpace(q.Get("connection")), Severity: strings.TrimSpace(q.Get("severity")),
		Service: strings.TrimSpace(q.Get("service")), Status: strings.TrimSpace(q.Get("status"))}
	if f.Status == "" && !q.Has("status") {
		f.Status = app.CloudFindingOpen
	}
	provs, err := s.app.ListCloudProviders(r.Context())
	if err != nil {
		return err
	}
	form := v.Form
	lv, findings, done, err := runList(w, r, v, cloudFindingList(sliceFetch(func() ([]app.CloudFinding, error) {
		return s.app.ListCloudFindings(r.Context(), f)
	})))
	if done {
		return err
	}
	if err != nil && !formErrors(err, v, r) {
		return err
	}
	v.Form = form
	lv.EmptyText = "No finding: every resource the scans looked at passes. Scan now re-checks a connection."
	open, err := s.app.ListCloudFindings(r.Context(), app.CloudFindingFilter{ConnectionID: f.ConnectionID, Status: app.CloudFindingOpen})
	if err != nil {
		return err
	}
	excepted, err := s.app.ListCloudFindings(r.Context(), app.CloudFindingFilter{ConnectionID: f.ConnectionID, Status: app.CloudFindingExcepted})
	if err != nil {
		return err
	}
	bySev, bySvc := map[string]int{}, map[string]int{}
	for _, x := range open {
		bySev[x.Severity]++
		bySvc[x.Service]++
	}
	var sev, svc []cloudCount
	for _, s := range app.FindingSeverities {
		sev = append(sev, cloudCount{s, bySev[s]})
	}
	for k, n := range bySvc {
		svc = append(svc, cloudCount{k, n})
	}
	sort.Slice(svc, func(i, j int) bool {
		return svc[i].Count > svc[j].Count || (svc[i].Count == svc[j].Count && svc[i].Key < svc[j].Key)
	})
	var conns []app.CloudConnectionInfo
	services := map[string]bool{}
	for _, p := range provs {
		conns = append(conns, p.Connections...)
		for _, sv := range p.Services {
			services[sv.ID] = true
		}
	}
	chart := template.HTML("")
	var history []app.CloudHistoryPoint
	for _, c := range conns {
		if f.ConnectionID != "" && c.ID != f.ConnectionID {
			continue
		}
		h, err := s.app.CloudHistory(r.Context(), c.ID)
		if err != nil {
			return err
		}
		history = append(history, h...)
	}
	sort.Slice(history, func(i, j int) bool { return history[i].At.Before(history[j].At) })
	chart = failingChart(history)
	v.Title, v.Section = "Cloud security", "cloud-security"
	v.Data = map[string]any{"Providers": provs, "Connections": conns, "Findings": findings, "Excepted": excepted, "BySeverity": sev,
		"ByService": svc, "Services": sortedSet(services), "Severities": app.FindingSeverities, "Statuses": app.CloudFindingStatuses,
		"Filter": f, "Chart": chart, "Open": len(open), "List": lv}
	return s.page(w, r, "cloud_security", v)
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// failingChart draws the failing resources of each finished scan as a
// server-rendered SVG line chart (no script).
func failingChart(points []app.CloudHistoryPoint) template.HTML {
	var done []app.CloudHistoryPoint
	for _, p := range points {
		if p.FinishedAt != nil && p.Status == app.RunSucceeded {
			done = append(done, p)
		}
	}
	if len(done) == 0 {
		return template.HTML(`<p class="muted small">No finished scan yet.</p>`)
	}
	const w, h, pad = 600, 160, 30
	maxV := 1
	for _, p := range done {
		maxV = max(maxV, p.Failed)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg role="img" aria-labelledby="chart-t" viewBox="0 0 %d %d" width="100%%" height="%d" class="chart">`, w, h, h)
	fmt.Fprintf(&b, `<title id="chart-t">Failing resources over the last %d scans, from %d to %d</title>`, len(done), done[0].Failed, done[len(done)-1].Failed)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="currentColor" stroke-opacity="0.3"/>`, pad, h-pad, w-pad, h-pad)
	fmt.Fprintf(&b, `<text x="2" y="%d" font-size="11">%d</text><text x="2" y="%d" font-size="11">0</text>`, pad, maxV, h-pad)
	var pts []string
	for i, p := range done {
		x := pad
		if len(done) > 1 {
			x = pad + i*(w-2*pad)/(len(done)-1)
		}
		y := h - pad - p.Failed*(h-2*pad)/maxV
		pts = append(pts, fmt.Sprintf("%d,%d", x, y))
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="3" fill="currentColor"><title>%s: %d failing</title></circle>`, x, y,
			template.HTMLEscapeString(p.FinishedAt.UTC().Format("2006-01-02 15:04")), p.Failed)
	}
	fmt.Fprintf(&b, `<polyline fill="none" stroke="currentColor" stroke-width="2" points="%s"/>`, strings.Join(pts, " "))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11">%s</text>`, pad, h-8, done[0].FinishedAt.UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`, w-pad, h-8, done[len(done)-1].FinishedAt.UTC().Format("2006-01-02"))
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built from numbers and escaped dates only
}

func (s *Server) uiCloudScan(w http.ResponseWriter, r *http.Request, v *view) error {
	id := r.PostForm.Get("connection")
	if _, err := s.app.TriggerCloudScan(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/cloud-security?connection="+id+"&done=cloud-scan-queued", http.StatusSeeOther)
	return nil
}
