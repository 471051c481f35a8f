package ui

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// CSV exports of the filtered vendor and evidence lists: the list page's
// own URL with format=csv gives every row its filters select (not one
// page), through the same services as the page and the API, so the same
// permissions apply.

// maxCSVRows bounds one export.
const maxCSVRows = 100_000

// csvLink is the list's URL with format=csv, every filter kept, no page.
func csvLink(r *http.Request) string {
	q := url.Values{}
	for k, vs := range r.URL.Query() {
		if k != "page" && k != "perPage" && k != "format" {
			q[k] = vs
		}
	}
	q.Set("format", "csv")
	return r.URL.Path + "?" + q.Encode()
}

// xlsxLink is csvLink for the XLSX file.
func xlsxLink(r *http.Request) string {
	return strings.Replace(csvLink(r), "format=csv", "format=xlsx", 1)
}

// wantsCSV reports whether the list is asked for as CSV.
func wantsCSV(r *http.Request) bool { return listFormats[r.URL.Query().Get("format")] }

// writeTable sends rows as CSV or, with format=xlsx, as XLSX.
func writeTable(w http.ResponseWriter, r *http.Request, name string, now time.Time, header []string, rows [][]string) error {
	if r.URL.Query().Get("format") == "xlsx" {
		return writeXLSX(w, name, now, header, rows)
	}
	return writeCSV(w, name, now, header, rows)
}

// csvSafe keeps a spreadsheet from reading a cell as a formula: a value
// starting with =, +, -, @, tab or carriage return gets a leading quote.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// writeCSV sends rows as a CSV attachment named name-YYYY-MM-DD.csv.
func writeCSV(w http.ResponseWriter, name string, now time.Time, header []string, rows [][]string) error {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+name+"-"+now.Format("2006-01-02")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return nil // the client went away; nothing to render
	}
	for _, row := range rows {
		for i := range row {
			row[i] = csvSafe(row[i])
		}
		if err := cw.Write(row); err != nil {
			return nil
		}
	}
	cw.Flush()
	return nil
}

func optTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// vendorsCSV exports every vendor the filter selects.
func (s *Server) vendorsCSV(w http.ResponseWriter, r *http.Request, v *view, f app.VendorFilter) error {
	names := map[string]string{}
	for _, p := range s.people(r) {
		names[p.ID] = p.Name
	}
	var rows [][]string
	for page := 1; len(rows) < maxCSVRows; page++ {
		f.Page = app.Page{Page: page, PerPage: app.MaxPerPage}
		l, err := s.app.ListVendors(r.Context(), f)
		if err != nil {
			return err
		}
		for _, vd := range l.Items {
			score := ""
			if vd.RiskScore != nil {
				score = strconv.Itoa(*vd.RiskScore)
			}
			assignee := ""
			if vd.AssigneeID != nil {
				assignee = names[*vd.AssigneeID]
			}
			rows = append(rows, []string{vd.ID, vd.Name, vd.Category, vd.Criticality, vd.Status, vd.DPAStatus,
				strconv.FormatBool(vd.ProcessesPersonalData), strconv.FormatBool(vd.ICTService), deref(vd.Country),
				deref(vd.Website), deref(vd.ContactEmail), assignee, score, deref(vd.NextReviewDue), optTime(vd.LastReviewedAt),
				optTime(vd.ArchivedAt), vd.CreatedAt.UTC().Format(time.RFC3339)})
		}
		if len(l.Items) < app.MaxPerPage || page*app.MaxPerPage >= l.Total {
			break
		}
	}
	return writeTable(w, r, "vendors", v.now, []string{"id", "name", "category", "criticality", "assessment", "dpaStatus",
		"processesPersonalData", "ictService", "country", "website", "contactEmail", "assignee", "riskScore", "nextReviewDue",
		"lastReviewedAt", "archivedAt", "createdAt"}, rows)
}

// evidenceCSV exports every evidence item the filter selects.
func (s *Server) evidenceCSV(w http.ResponseWriter, r *http.Request, v *view, f app.EvidenceLibraryFilter) error {
	names := map[string]string{}
	for _, p := range s.people(r) {
		names[p.ID] = p.Name
	}
	var rows [][]string
	for page := 1; len(rows) < maxCSVRows; page++ {
		f.Page = app.Page{Page: page, PerPage: app.MaxPerPage}
		l, err := s.app.EvidenceLibrary(r.Context(), f)
		if err != nil {
			return err
		}
		for _, it := range l.Items {
			fws := make([]string, len(it.Frameworks))
			for i, fw := range it.Frameworks {
				fws[i] = fw.Name
			}
			rows = append(rows, []string{it.ID, it.Filename, it.Description, it.ControlID, it.ControlCode, it.ControlName,
				strings.Join(fws, "; "), uploaderName(names, it.UploadedBy), it.UploadedAt.UTC().Format(time.RFC3339),
				optTime(it.ExpiresAt), strconv.FormatBool(it.Expired), strconv.FormatInt(it.Size, 10)})
		}
		if len(l.Items) < app.MaxPerPage || page*app.MaxPerPage >= l.Total {
			break
		}
	}
	return writeTable(w, r, "evidence", v.now, []string{"id", "filename", "description", "controlId", "controlCode", "controlName",
		"frameworks", "uploadedBy", "uploadedAt", "expiresAt", "expired", "size"}, rows)
}
