package api

import (
	"context"
	"mime"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// controlRoutes registers the routes of the handlers in this file.
func (s *Server) controlRoutes(handle routeFunc) {
	handle("GET", "/v1/controls", httpx.CanRead, s.listControls)
	handle("POST", "/v1/controls", httpx.CanManage, s.createControl)
	handle("GET", "/v1/controls/{controlId}", httpx.CanRead, s.getControl)
	handle("PATCH", "/v1/controls/{controlId}", httpx.CanManage, s.updateControl)
	handle("POST", "/v1/controls/{controlId}/evidence", httpx.CanManage.Prepare(s.prepareEvidence), s.uploadControlEvidence)
	handle("GET", "/v1/controls/{controlId}/evidence", httpx.CanRead, s.listControlEvidence)

	handle("GET", "/v1/evidence/{evidenceId}", httpx.CanRead, s.getEvidence)
	handle("GET", "/v1/evidence/{evidenceId}/download", httpx.CanRead, s.downloadEvidence)
	handle("DELETE", "/v1/evidence/{evidenceId}", httpx.CanManage, s.deleteEvidence)
	handle("GET", "/v1/evidence-export", httpx.CanManage, s.exportEvidence)
	handle("GET", "/v1/evidence-export/auditor", httpx.CanRead, s.exportEvidenceAuditor)

	handle("GET", "/v1/tasks", httpx.CanRead, s.listTasks)
	handle("POST", "/v1/tasks", httpx.CanManage, s.createTask)
	handle("PATCH", "/v1/tasks/bulk", httpx.CanManage, s.bulkTaskStatus)
	handle("PATCH", "/v1/tasks/bulk/assignee", httpx.CanManage, s.bulkTaskAssignee)
	handle("POST", "/v1/tasks/reassign", httpx.CanManage, s.reassignTasks)
	handle("GET", "/v1/tasks/{taskId}", httpx.CanRead, s.getTask)
	handle("PATCH", "/v1/tasks/{taskId}", httpx.CanSelf, s.updateTask)
	handle("DELETE", "/v1/tasks/{taskId}", httpx.CanManage, s.deleteTask)
	handle("POST", "/v1/tasks/{taskId}/complete", httpx.CanSelf, s.completeTask)
	handle("POST", "/v1/tasks/{taskId}/evidence", httpx.CanSelf, s.attachTaskEvidence)
	handle("GET", "/v1/tasks/{taskId}/evidence", httpx.CanRead, s.listTaskEvidence)
}

func (s *Server) listControls(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListControls(r.Context(), app.ControlFilter{FrameworkID: q.Get("frameworkId"), Status: q.Get("status"),
		OwnerID: q.Get("ownerId"), Search: q.Get("q"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getControl(w http.ResponseWriter, r *http.Request) error {
	c, err := s.app.GetControl(r.Context(), pathID(r, "controlId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) createControl(w http.ResponseWriter, r *http.Request) error {
	var in app.ControlInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.CreateControl(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, c)
	return nil
}

func (s *Server) updateControl(w http.ResponseWriter, r *http.Request) error {
	var in app.ControlInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	c, err := s.app.UpdateControl(r.Context(), pathID(r, "controlId"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

// evidenceUpload reads the spec's multipart form: file, description, expiresAt.
func (s *Server) evidenceUpload(w http.ResponseWriter, r *http.Request) (*httpx.Upload, app.EvidenceUpload, error) {
	u, err := s.ParseUpload(w, r, "file")
	if err != nil {
		return nil, app.EvidenceUpload{}, err
	}
	return u, app.EvidenceUpload{File: u.File, Filename: u.Filename, ContentType: u.Type,
		Description: u.Fields["description"], ExpiresAt: u.Fields["expiresAt"]}, nil
}

type preparedEvidenceKey struct{}

// prepareEvidence parses the upload and stores its file before the
// handler runs (under an Idempotency-Key, before the write transaction).
func (s *Server) prepareEvidence(w http.ResponseWriter, r *http.Request) (*http.Request, func(), error) {
	u, in, err := s.evidenceUpload(w, r)
	if err != nil {
		return nil, nil, err
	}
	defer u.Close()
	blob, err := s.app.StoreUpload(r.Context(), in.File)
	if err != nil {
		return nil, nil, err
	}
	in.File, in.Stored = nil, &blob
	return r.WithContext(context.WithValue(r.Context(), preparedEvidenceKey{}, in)), func() {}, nil
}

func (s *Server) uploadControlEvidence(w http.ResponseWriter, r *http.Request) error {
	in, ok := r.Context().Value(preparedEvidenceKey{}).(app.EvidenceUpload)
	if !ok {
		u, parsed, err := s.evidenceUpload(w, r)
		if err != nil {
			return err
		}
		defer u.Close()
		in = parsed
	}
	ev, err := s.app.UploadEvidence(r.Context(), pathID(r, "controlId"), "", in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, ev)
	return nil
}

func (s *Server) listControlEvidence(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListEvidence(r.Context(), app.EvidenceFilter{ControlID: pathID(r, "controlId"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getEvidence(w http.ResponseWriter, r *http.Request) error {
	ev, err := s.app.GetEvidence(r.Context(), pathID(r, "evidenceId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, ev)
	return nil
}

func (s *Server) downloadEvidence(w http.ResponseWriter, r *http.Request) error {
	ev, f, err := s.app.OpenEvidence(r.Context(), pathID(r, "evidenceId"))
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", ev.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": ev.Filename}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("ETag", `"`+ev.SHA256+`"`)
	w.Header().Set("Digest", "sha-256="+ev.SHA256)
	http.ServeContent(w, r, "", ev.UploadedAt, f)
	return nil
}

func (s *Server) deleteEvidence(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteEvidence(r.Context(), pathID(r, "evidenceId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) exportEvidence(w http.ResponseWriter, r *http.Request) error {
	return s.WriteExport(w, r, false)
}

func (s *Server) exportEvidenceAuditor(w http.ResponseWriter, r *http.Request) error {
	return s.WriteExport(w, r, true)
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.TaskFilter{AssigneeID: q.Get("assigneeId"), Status: q.Get("status"), ControlID: q.Get("controlId"),
		DueFrom: q.Get("dueFrom"), DueTo: q.Get("dueTo"), Page: p}
	l, err := s.app.ListTasks(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.app.GetTask(r.Context(), pathID(r, "taskId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) createTask(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	t, err := s.app.CreateTask(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, t)
	return nil
}

func (s *Server) updateTask(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	t, err := s.app.UpdateTask(r.Context(), pathID(r, "taskId"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) deleteTask(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteTask(r.Context(), pathID(r, "taskId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) completeTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.app.CompleteTask(r.Context(), pathID(r, "taskId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

// attachTaskEvidence takes either a multipart upload (file, description,
// expiresAt) or JSON {evidenceId} naming evidence of the task's control.
func (s *Server) attachTaskEvidence(w http.ResponseWriter, r *http.Request) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if strings.HasPrefix(mt, "multipart/") {
		u, in, err := s.evidenceUpload(w, r)
		if err != nil {
			return err
		}
		defer u.Close()
		ev, err := s.app.UploadEvidence(r.Context(), "", pathID(r, "taskId"), in)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusCreated, ev)
		return nil
	}
	var in struct {
		EvidenceID *string `json:"evidenceId"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.EvidenceID == nil || *in.EvidenceID == "" {
		return app.Invalid("evidenceId", app.CodeRequired, nil, "evidenceId is required (or upload a file as multipart/form-data)")
	}
	ev, err := s.app.AttachEvidence(r.Context(), pathID(r, "taskId"), *in.EvidenceID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, ev)
	return nil
}

func (s *Server) listTaskEvidence(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListEvidence(r.Context(), app.EvidenceFilter{TaskID: pathID(r, "taskId"), Page: p})
	if err != nil {
		return err
	}
	autos, err := s.app.TaskEvidenceAutomations(r.Context(), pathID(r, "taskId"))
	if err != nil {
		return err
	}
	if l.Items == nil {
		l.Items = []app.Evidence{}
	}
	httpx.WriteJSON(w, http.StatusOK, taskEvidenceBody{Data: l.Items, Meta: httpx.NewMeta(p, l.Total), Automations: autos})
	return nil
}

func (s *Server) bulkTaskStatus(w http.ResponseWriter, r *http.Request) error {
	var in app.BulkTaskStatus
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	n, err := s.app.BulkUpdateTaskStatus(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]int{"updatedCount": n})
	return nil
}

func (s *Server) bulkTaskAssignee(w http.ResponseWriter, r *http.Request) error {
	var in app.BulkTaskAssignee
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	n, err := s.app.BulkUpdateTaskAssignee(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]int{"updatedCount": n})
	return nil
}

func (s *Server) reassignTasks(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskReassignment
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	n, err := s.app.ReassignTasks(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]int{"updatedCount": n})
	return nil
}
