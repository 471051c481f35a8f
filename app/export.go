package app

import (
	"archive/zip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ExportOptions choose what an evidence export holds.
type ExportOptions struct {
	// FrameworkID limits the export to the controls of one framework.
	FrameworkID string
	// Auditor makes the auditor-scoped package: only current (unexpired)
	// evidence and no internal fields (owners, uploaders, tasks).
	Auditor bool
	// Progress, when set, is told how many of the controls are written,
	// before the first and after each one.
	Progress func(done, total int)
}

// ExportManifest is manifest.json of an evidence export.
type ExportManifest struct {
	OrganizationID string          `json:"organizationId"`
	GeneratedAt    time.Time       `json:"generatedAt"`
	Scope          string          `json:"scope"`
	FrameworkID    *string         `json:"frameworkId"`
	Auditor        bool            `json:"auditor"`
	Controls       []ExportControl `json:"controls"`
}

// ExportControl is one control in the manifest.
type ExportControl struct {
	ID            string            `json:"id"`
	Code          string            `json:"code"`
	Name          string            `json:"name"`
	Status        string            `json:"status"`
	Assessment    string            `json:"assessment"`
	Justification *string           `json:"justification"`
	OwnerID       *string           `json:"ownerId,omitempty"`
	Requirements  []RequirementLink `json:"requirements"`
	Evidence      []ExportEvidence  `json:"evidence"`
}

// ExportEvidence is one file in the manifest.
type ExportEvidence struct {
	ID          string     `json:"id"`
	Path        string     `json:"path"`
	Filename    string     `json:"filename"`
	ContentType string     `json:"contentType"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	Description string     `json:"description"`
	UploadedAt  time.Time  `json:"uploadedAt"`
	ExpiresAt   *time.Time `json:"expiresAt"`
	Expired     bool       `json:"expired"`
	TaskID      *string    `json:"taskId,omitempty"`
	UploadedBy  string     `json:"uploadedBy,omitempty"`
}

// CheckExport verifies the caller may take the export: the full package
// needs manage rights; the auditor-scoped one any role that reads the whole
// organization (owner, admin, auditor).
func (a *App) CheckExport(ctx context.Context, opts ExportOptions) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if !opts.Auditor {
		if err := p.Require(CapManage); err != nil {
			return err
		}
	} else if p.SeesOnlyAssigned() {
		return Errorf(ErrForbidden, "the %s role may not export evidence", p.Role)
	}
	if opts.FrameworkID != "" {
		if _, _, err := a.resolveFramework(ctx, p.OrgID, opts.FrameworkID); errors.Is(err, ErrNotFound) {
			return Invalid("frameworkId", CodeUnknownReference, opts.FrameworkID, "frameworkId must name a framework")
		} else if err != nil {
			return err
		}
	}
	return nil
}

func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
	if len(s) > 120 {
		s = s[:120]
	}
	if s == "" || s == "." || s == ".." {
		s = "_"
	}
	return s
}

// WriteEvidenceExport writes a zip of the organization's (or one
// framework's) controls with their evidence files, manifest.json and
// manifest.csv (with SHA-256 hashes) to w.
func (a *App) WriteEvidenceExport(ctx context.Context, w io.Writer, opts ExportOptions) error {
	if err := a.CheckExport(ctx, opts); err != nil {
		return err
	}
	p, _ := principal(ctx)
	now := a.Now()
	m := ExportManifest{OrganizationID: p.OrgID, GeneratedAt: now, Scope: "organization", Auditor: opts.Auditor, Controls: []ExportControl{}}
	f := ControlFilter{Page: Page{Page: 1, PerPage: MaxPerPage}}
	if opts.FrameworkID != "" {
		fw, _, err := a.resolveFramework(ctx, p.OrgID, opts.FrameworkID)
		if err != nil {
			return err
		}
		f.FrameworkID, m.Scope, m.FrameworkID = fw.ID, "framework", Ptr(fw.ID)
	}
	var controls []Control
	for {
		l, err := a.store.ListControls(ctx, p.OrgID, f)
		if err != nil {
			return fmt.Errorf("export evidence: %w", err)
		}
		if err := a.decorate(ctx, p.OrgID, l.Items); err != nil {
			return fmt.Errorf("export evidence: %w", err)
		}
		controls = append(controls, l.Items...)
		if f.Page.Offset()+len(l.Items) >= l.Total || len(l.Items) == 0 {
			break
		}
		f.Page.Page++
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(int, int) {}
	}
	progress(0, len(controls))
	zw := zip.NewWriter(w)
	for i, c := range controls {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("export evidence: %w", err)
		}
		ec := ExportControl{ID: c.ID, Code: c.Code, Name: c.Name, Status: c.Status, Assessment: c.Assessment,
			Justification: c.Justification, Requirements: c.Requirements, Evidence: []ExportEvidence{}}
		if !opts.Auditor {
			ec.OwnerID = c.OwnerID
		}
		ef := EvidenceFilter{ControlID: c.ID, OnlyCurrent: opts.Auditor, Now: now, Page: Page{Page: 1, PerPage: 100000}}
		evs, err := a.store.ListEvidence(ctx, p.OrgID, ef)
		if err != nil {
			return fmt.Errorf("export evidence: %w", err)
		}
		for _, ev := range evs.Items {
			ev.fill(now)
			path := "evidence/" + safeName(c.Code+"_"+c.ID) + "/" + ev.ID + "_" + safeName(ev.Filename)
			x := ExportEvidence{ID: ev.ID, Path: path, Filename: ev.Filename, ContentType: ev.ContentType, Size: ev.Size,
				SHA256: ev.SHA256, Description: ev.Description, UploadedAt: ev.UploadedAt, ExpiresAt: ev.ExpiresAt, Expired: ev.Expired}
			if !opts.Auditor {
				x.TaskID, x.UploadedBy = ev.TaskID, ev.UploadedBy
			}
			if err := a.copyBlob(ctx, zw, path, ev.SHA256, ev.UploadedAt); err != nil {
				return err
			}
			ec.Evidence = append(ec.Evidence, x)
		}
		m.Controls = append(m.Controls, ec)
		progress(i+1, len(controls))
	}
	mw, err := zw.CreateHeader(&zip.FileHeader{Name: "manifest.json", Method: zip.Deflate, Modified: now})
	if err != nil {
		return fmt.Errorf("export evidence: %w", err)
	}
	enc := json.NewEncoder(mw)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("export evidence: %w", err)
	}
	cw, err := zw.CreateHeader(&zip.FileHeader{Name: "manifest.csv", Method: zip.Deflate, Modified: now})
	if err != nil {
		return fmt.Errorf("export evidence: %w", err)
	}
	out := csv.NewWriter(cw)
	_ = out.Write([]string{"controlId", "controlCode", "controlName", "controlStatus", "requirements", "evidenceId", "path",
		"filename", "sha256", "size", "uploadedAt", "expiresAt", "expired"})
	for _, c := range m.Controls {
		var refs []string
		for _, r := range c.Requirements {
			refs = append(refs, r.FrameworkSlug+":"+r.Ref)
		}
		row := []string{c.ID, c.Code, c.Name, c.Status, strings.Join(refs, "; ")}
		if len(c.Evidence) == 0 {
			_ = out.Write(append(row, "", "", "", "", "", "", "", ""))
			continue
		}
		for _, e := range c.Evidence {
			exp := ""
			if e.ExpiresAt != nil {
				exp = e.ExpiresAt.UTC().Format(time.RFC3339)
			}
			_ = out.Write(append(append([]string{}, row...), e.ID, e.Path, e.Filename, e.SHA256, strconv.FormatInt(e.Size, 10),
				e.UploadedAt.UTC().Format(time.RFC3339), exp, strconv.FormatBool(e.Expired)))
		}
	}
	out.Flush()
	if err := out.Error(); err != nil {
		return fmt.Errorf("export evidence: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("export evidence: %w", err)
	}
	return nil
}

func (a *App) copyBlob(ctx context.Context, zw *zip.Writer, path, hash string, mod time.Time) error {
	if a.files == nil {
		return errors.New("export evidence: no file store configured")
	}
	src, err := a.files.Open(ctx, hash)
	if err != nil {
		return fmt.Errorf("export evidence %s: %w", path, err)
	}
	defer src.Close()
	dst, err := zw.CreateHeader(&zip.FileHeader{Name: path, Method: zip.Deflate, Modified: mod})
	if err != nil {
		return fmt.Errorf("export evidence: %w", err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("export evidence %s: %w", path, err)
	}
	return nil
}
