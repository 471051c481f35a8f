package api

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/go-pdf/fpdf"
)

// soaRoutes registers the routes of the handlers in this file.
func (s *Server) soaRoutes(handle routeFunc) {
	handle("GET", "/v1/soa", httpx.CanRead, s.listSOA)
	handle("GET", "/v1/soa/export", httpx.CanRead, s.exportSOA)
	handle("GET", "/v1/soa/{requirementId}", httpx.CanRead, s.getSOAEntry)
	handle("PATCH", "/v1/soa/{requirementId}", httpx.CanManage, s.updateSOAEntry)
}

func (s *Server) listSOA(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	doc, err := s.app.SOA(r.Context(), r.URL.Query().Get("frameworkId"))
	if err != nil {
		return err
	}
	all := doc.Entries
	httpx.WriteList(w, p, app.List[app.SOAEntry]{Items: all[min(p.Offset(), len(all)):min(p.Offset()+p.PerPage, len(all))], Total: len(all)})
	return nil
}

func (s *Server) getSOAEntry(w http.ResponseWriter, r *http.Request) error {
	e, err := s.app.GetSOAEntry(r.Context(), pathID(r, "requirementId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) updateSOAEntry(w http.ResponseWriter, r *http.Request) error {
	var in app.SOAInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	e, err := s.app.UpdateSOAEntry(r.Context(), pathID(r, "requirementId"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, e)
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func soaControls(e app.SOAEntry) string {
	var parts []string
	for _, c := range e.Controls {
		parts = append(parts, c.Code+" ("+strings.ReplaceAll(c.Status, "_", " ")+")")
	}
	return strings.Join(parts, "; ")
}

// exportSOA writes the Statement of Applicability as CSV (default) or PDF.
func (s *Server) exportSOA(w http.ResponseWriter, r *http.Request) error {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "csv"
	}
	if format != "csv" && format != "pdf" {
		return httpx.BadRequest("format", format, "format must be csv or pdf")
	}
	doc, err := s.app.SOA(r.Context(), r.URL.Query().Get("frameworkId"))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	ctype := "text/csv; charset=utf-8"
	if format == "csv" {
		cw := csv.NewWriter(&buf)
		_ = cw.Write([]string{"ref", "title", "applicable", "justification", "implemented", "controls"})
		for _, e := range doc.Entries {
			just := ""
			if e.Justification != nil {
				just = *e.Justification
			}
			_ = cw.Write([]string{e.Ref, e.Title, yesNo(e.Applicable), just, yesNo(e.Implemented), soaControls(e)})
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("write soa csv: %w", err)
		}
	} else {
		ctype = "application/pdf"
		if err := soaPDF(&buf, doc); err != nil {
			return fmt.Errorf("write soa pdf: %w", err)
		}
	}
	name := "statement-of-applicability-" + doc.Framework.Slug + "." + format
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// soaPDF renders the statement as an A4 landscape table with a header on
// every page.
func soaPDF(out *bytes.Buffer, doc *app.SOADocument) error {
	pdf := fpdf.New("L", "mm", "A4", "")
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetMargins(12, 14, 12)
	pdf.SetAutoPageBreak(false, 14)
	pdf.AliasNbPages("")
	title := "Statement of Applicability - " + doc.Framework.Name
	pdf.SetFooterFunc(func() {
		pdf.SetY(-10)
		pdf.SetFont("Helvetica", "", 7)
		pdf.CellFormat(0, 4, tr(fmt.Sprintf("%s | generated %s | page %d of {nb}", title, doc.At.Format("2006-01-02 15:04 MST"), pdf.PageNo())), "", 0, "C", false, 0, "")
	})
	cols := []struct {
		name string
		w    float64
	}{{"Ref", 18}, {"Control", 70}, {"Applicable", 20}, {"Justification", 80}, {"Implemented", 22}, {"Controls (status)", 63}}
	header := func() {
		pdf.SetFont("Helvetica", "B", 8)
		pdf.SetFillColor(230, 230, 230)
		for _, c := range cols {
			pdf.CellFormat(c.w, 6, c.name, "1", 0, "L", true, 0, "")
		}
		pdf.Ln(-1)
		pdf.SetFont("Helvetica", "", 8)
	}
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 14)
	pdf.CellFormat(0, 8, tr(title), "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 9)
	applicable, implemented := 0, 0
	for _, e := range doc.Entries {
		if e.Applicable {
			applicable++
			if e.Implemented {
				implemented++
			}
		}
	}
	pdf.CellFormat(0, 5, tr(fmt.Sprintf("Framework version %s. %d controls: %d applicable (%d implemented), %d excluded.",
		doc.Framework.Version, len(doc.Entries), applicable, implemented, len(doc.Entries)-applicable)), "", 1, "L", false, 0, "")
	pdf.Ln(2)
	header()
	_, pageH := pdf.GetPageSize()
	const lh = 4.0
	for _, e := range doc.Entries {
		just := ""
		if e.Justification != nil {
			just = *e.Justification
		}
		cells := []string{e.Ref, e.Title, yesNo(e.Applicable), just, yesNo(e.Implemented), soaControls(e)}
		lines := 1
		split := make([][][]byte, len(cells))
		for i, c := range cells {
			split[i] = pdf.SplitLines([]byte(tr(c)), cols[i].w-2)
			if len(split[i]) > lines {
				lines = len(split[i])
			}
		}
		h := float64(lines)*lh + 1
		if pdf.GetY()+h > pageH-16 {
			pdf.AddPage()
			header()
		}
		x, y := pdf.GetXY()
		for i, c := range cols {
			pdf.Rect(x, y, c.w, h, "D")
			for j, ln := range split[i] {
				pdf.SetXY(x+1, y+0.5+float64(j)*lh)
				pdf.CellFormat(c.w-2, lh, string(ln), "", 0, "L", false, 0, "")
			}
			x += c.w
		}
		pdf.SetXY(12, y+h)
	}
	return pdf.Output(out)
}
