package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

// ReportPDF is a report rendered as a PDF file.
type ReportPDF struct {
	Filename string
	Content  []byte
}

// IncidentReportPDF renders a report as a PDF: version n (0 for the
// current content, which is the prefilled draft before any version is
// saved). The appliance never submits it anywhere; the person does.
func (a *App) IncidentReportPDF(ctx context.Context, incidentID, reportID string, n int) (*ReportPDF, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	inc, r, err := a.reportContext(ctx, p, incidentID, reportID)
	if err != nil {
		return nil, err
	}
	d, err := a.reportDetail(ctx, p.OrgID, inc, r)
	if err != nil {
		return nil, err
	}
	var v *ReportVersion
	content := d.Content
	if n < 0 {
		return nil, Invalid("version", CodeInvalid, n, "version must be a positive integer")
	}
	if n > 0 {
		for i := range d.VersionHistory {
			if d.VersionHistory[i].Version == n {
				v = &d.VersionHistory[i]
			}
		}
		if v == nil {
			return nil, Errorf(ErrNotFound, "report %s has no version %d", reportID, n)
		}
		content = v.Content
	} else if len(d.VersionHistory) > 0 {
		v = &d.VersionHistory[len(d.VersionHistory)-1]
	}
	var buf bytes.Buffer
	if err := renderReportPDF(&buf, inc, d, v, content, a.Now()); err != nil {
		return nil, fmt.Errorf("render report %s: %w", reportID, err)
	}
	name := strings.ReplaceAll(strings.ToLower(d.Title), " ", "-")
	if v != nil {
		name += fmt.Sprintf("-v%d", v.Version)
	} else {
		name += "-draft"
	}
	return &ReportPDF{Filename: inc.ID + "-" + name + ".pdf", Content: buf.Bytes()}, nil
}

func renderReportPDF(out *bytes.Buffer, inc *Incident, d *ReportDetail, v *ReportVersion, content map[string]string, now time.Time) error {
	pdf := fpdf.New("P", "mm", "A4", "")
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetMargins(18, 16, 18)
	pdf.SetAutoPageBreak(true, 18)
	pdf.AliasNbPages("")
	pdf.SetFooterFunc(func() {
		pdf.SetY(-12)
		pdf.SetFont("Helvetica", "", 7)
		pdf.CellFormat(0, 4, tr(fmt.Sprintf("%s | %s | generated %s | page %d of {nb} | prepared with the compliance appliance, which submits nothing to any authority",
			d.Title, inc.ID, now.Format("2006-01-02 15:04 UTC"), pdf.PageNo())), "", 0, "C", false, 0, "")
	})
	pdf.AddPage()
	w, _ := pdf.GetPageSize()
	width := w - 36
	pdf.SetFont("Helvetica", "B", 15)
	pdf.MultiCell(width, 7, tr(d.Title), "", "L", false)
	pdf.SetFont("Helvetica", "", 9)
	line := func(s string) { pdf.MultiCell(width, 4.5, tr(s), "", "L", false) }
	line("Incident: " + inc.Title + " (" + inc.ID + ")")
	line("Legal basis: " + d.Basis)
	if d.DueAt != nil {
		line("Due: " + utc(d.DueAt) + " (from " + d.StartEvent + ")")
	}
	switch {
	case v == nil:
		line("State: draft prefilled from the incident record, not saved, not sent.")
	case v.State == "sent":
		ref := ""
		if v.Reference != nil {
			ref = ", reference " + *v.Reference
		}
		line(fmt.Sprintf("Version %d: sent %s to %s%s.", v.Version, utc(v.SentAt), sp(v.Authority), ref))
		line("Content SHA-256: " + v.ContentSHA256)
	default:
		line(fmt.Sprintf("Version %d: draft saved %s, not sent.", v.Version, utc(&v.CreatedAt)))
	}
	pdf.Ln(3)
	for _, f := range d.Fields {
		pdf.SetFont("Helvetica", "B", 10)
		pdf.MultiCell(width, 5, tr(f.Label), "", "L", false)
		pdf.SetFont("Helvetica", "I", 7)
		pdf.MultiCell(width, 3.5, tr(f.Basis), "", "L", false)
		pdf.SetFont("Helvetica", "", 10)
		val := strings.TrimSpace(content[f.Key])
		if val == "" {
			val = "-"
		}
		pdf.MultiCell(width, 5, tr(val), "", "L", false)
		pdf.Ln(2)
	}
	return pdf.Output(out)
}
