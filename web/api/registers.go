package api

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// registersRoutes registers the routes of the handlers in this file.
func (s *Server) registersRoutes(handle routeFunc) {
	handle("GET", "/v1/risks", httpx.CanRead, s.listRisks)
	handle("POST", "/v1/risks", httpx.CanManage, s.createRisk)
	handle("GET", "/v1/risks/{id}", httpx.CanRead, s.getRisk)
	handle("PATCH", "/v1/risks/{id}", httpx.CanManage, s.updateRisk)
	handle("POST", "/v1/risks/{id}/archive", httpx.CanManage, s.archiveRisk)
	handle("POST", "/v1/risks/{id}/restore", httpx.CanManage, s.restoreRisk)

	handle("GET", "/v1/findings", httpx.CanRead, s.listFindings)
	handle("POST", "/v1/findings", httpx.CanReview.WriteAhead(), s.createFinding)
	handle("GET", "/v1/findings/{id}", httpx.CanRead, s.getFinding)
	handle("PATCH", "/v1/findings/{id}", httpx.CanReview, s.updateFinding)
	handle("POST", "/v1/findings/{id}/close", httpx.CanReview, s.closeFinding)
	handle("GET", "/v1/findings/{id}/corrective-actions", httpx.CanRead, s.listCorrectiveActions)
	handle("POST", "/v1/findings/{id}/corrective-actions", httpx.CanManage, s.createCorrectiveAction)
	handle("GET", "/v1/findings/{id}/corrective-actions/{actionId}", httpx.CanRead, s.getCorrectiveAction)

	handle("PATCH", "/v1/findings/{id}/corrective-actions/{actionId}", httpx.CanRead, s.updateCorrectiveAction)

	handle("GET", "/v1/finding-template", httpx.CanRead, s.listFindingTemplates)
	handle("POST", "/v1/finding-template", httpx.CanManage, s.createFindingTemplate)
	handle("GET", "/v1/finding-template/{id}", httpx.CanRead, s.getFindingTemplate)
	handle("PATCH", "/v1/finding-template/{id}", httpx.CanManage, s.updateFindingTemplate)
	handle("DELETE", "/v1/finding-template/{id}", httpx.CanManage, s.deleteFindingTemplate)

	handle("GET", "/v1/comments", httpx.CanRead, s.listComments)
	handle("POST", "/v1/comments", httpx.CanReview, s.createComment)
	handle("GET", "/v1/comments/{id}", httpx.CanRead, s.getComment)
	handle("PATCH", "/v1/comments/{id}", httpx.CanReview, s.updateComment)
	handle("PUT", "/v1/comments/{id}", httpx.CanReview, s.updateComment)
	handle("DELETE", "/v1/comments/{id}", httpx.CanReview, s.deleteComment)

	handle("GET", "/v1/attachments", httpx.CanRead, s.listAttachments)
	handle("POST", "/v1/attachments", httpx.CanReview, s.createAttachment)
	handle("GET", "/v1/attachments/{id}", httpx.CanRead, s.getAttachment)
	handle("GET", "/v1/attachments/{id}/download", httpx.CanRead, s.downloadAttachment)

	handle("GET", "/v1/csrd/data-points", httpx.CanRead, s.listESGDataPoints)
	handle("POST", "/v1/csrd/data-points", httpx.CanManage, s.createESGDataPoint)
	handle("GET", "/v1/csrd/data-points/{id}", httpx.CanRead, s.getESGDataPoint)
	handle("PATCH", "/v1/csrd/data-points/{id}", httpx.CanManage, s.updateESGDataPoint)
}

// intParam reads an optional integer query parameter (nil when absent).
func intParam(r *http.Request, name string) (*int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, httpx.BadRequest(name, s, "%s must be an integer", name)
	}
	return &n, nil
}

// firstParam returns the first non-empty query parameter of names.
func firstParam(r *http.Request, names ...string) string {
	q := r.URL.Query()
	for _, n := range names {
		if v := q.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// ok writes v with status.
func ok(w http.ResponseWriter, status int, v any, err error) error {
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, status, v)
	return nil
}

// Risks.

func (s *Server) listRisks(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.RiskFilter{Status: q.Get("status"), OwnerID: firstParam(r, "ownerId", "owner", "assigneeId"),
		Category: q.Get("category"), Band: q.Get("band"), Page: p}
	if f.MinScore, err = intParam(r, "minScore"); err != nil {
		return err
	}
	if f.MaxScore, err = intParam(r, "maxScore"); err != nil {
		return err
	}
	archived, err := httpx.BoolParam(r, "archived")
	if err != nil {
		return err
	}
	f.Archived = archived != nil && *archived
	l, err := s.app.ListRisks(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getRisk(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetRisk(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) createRisk(w http.ResponseWriter, r *http.Request) error {
	var in app.RiskInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateRisk(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) updateRisk(w http.ResponseWriter, r *http.Request) error {
	var in app.RiskInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateRisk(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) archiveRisk(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.SetRiskArchived(r.Context(), pathID(r, "id"), true)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) restoreRisk(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.SetRiskArchived(r.Context(), pathID(r, "id"), false)
	return ok(w, http.StatusOK, v, err)
}

// Findings.

func (s *Server) listFindings(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.FindingFilter{Status: q.Get("status"), Severity: q.Get("severity"), Type: q.Get("type"), TaskID: q.Get("taskId"),
		ControlID: q.Get("controlId"), Scope: q.Get("scope"), FindingClass: q.Get("findingClass"), Page: p}
	l, err := s.app.ListFindings(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getFinding(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetFinding(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) createFinding(w http.ResponseWriter, r *http.Request) error {
	var in app.FindingCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateFinding(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) updateFinding(w http.ResponseWriter, r *http.Request) error {
	var in app.FindingPatch
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateFinding(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) closeFinding(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.CloseFinding(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

// Corrective actions.

func (s *Server) listCorrectiveActions(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListCorrectiveActions(r.Context(), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getCorrectiveAction(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetCorrectiveAction(r.Context(), pathID(r, "id"), pathID(r, "actionId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) createCorrectiveAction(w http.ResponseWriter, r *http.Request) error {
	var in app.CorrectiveActionInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateCorrectiveAction(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) updateCorrectiveAction(w http.ResponseWriter, r *http.Request) error {
	var in app.CorrectiveActionInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateCorrectiveAction(r.Context(), pathID(r, "id"), pathID(r, "actionId"), in)
	return ok(w, http.StatusOK, v, err)
}

// Finding templates.

func (s *Server) listFindingTemplates(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListFindingTemplates(r.Context(), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getFindingTemplate(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetFindingTemplate(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) createFindingTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.FindingTemplateInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateFindingTemplate(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) updateFindingTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.FindingTemplateInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateFindingTemplate(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) deleteFindingTemplate(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteFindingTemplate(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Comments.

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListComments(r.Context(), q.Get("entityType"), q.Get("entityId"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getComment(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetComment(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) error {
	var in app.CommentInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateComment(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) updateComment(w http.ResponseWriter, r *http.Request) error {
	var in app.CommentInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateComment(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) deleteComment(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteComment(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Attachments.

func (s *Server) listAttachments(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListAttachments(r.Context(), q.Get("entityType"), q.Get("entityId"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getAttachment(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetAttachment(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) createAttachment(w http.ResponseWriter, r *http.Request) error {
	u, err := s.ParseUpload(w, r, "file")
	if err != nil {
		return err
	}
	defer func() {
		u.Close()
		if r.MultipartForm != nil {
			_ = r.MultipartForm.RemoveAll()
		}
	}()
	name := u.Filename
	if v := strings.TrimSpace(u.Fields["fileName"]); v != "" {
		name = v
	}
	ct := u.Type
	if v := strings.TrimSpace(u.Fields["fileType"]); v != "" {
		ct = v
	}
	v, err := s.app.CreateAttachment(r.Context(), app.AttachmentUpload{EntityType: u.Fields["entityType"], EntityID: u.Fields["entityId"],
		Name: name, ContentType: ct, Description: u.Fields["description"], Body: u.File})
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) downloadAttachment(w http.ResponseWriter, r *http.Request) error {
	at, f, err := s.app.OpenAttachment(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	defer f.Close()
	ct := at.Type
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": at.Name}))
	w.Header().Set("X-Content-SHA256", at.SHA256)
	http.ServeContent(w, r, "", at.CreatedAt, f)
	return nil
}

// CSRD data points.

func (s *Server) listESGDataPoints(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListESGDataPoints(r.Context(), app.ESGFilter{Standard: q.Get("standard"), Period: q.Get("period"),
		ESRSCode: q.Get("esrsCode"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getESGDataPoint(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetESGDataPoint(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) createESGDataPoint(w http.ResponseWriter, r *http.Request) error {
	var in app.ESGDataPointInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateESGDataPoint(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) updateESGDataPoint(w http.ResponseWriter, r *http.Request) error {
	var in app.ESGDataPointInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateESGDataPoint(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}
