package api

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// trainingRoutes registers the training catalog, assignments, completions,
// certificates and each person's "my work". Everyone reads what the
// services let them see (employees and contractors: their own); taking a
// quiz or acknowledging a module is self-service; assigning and writing
// modules is for owners and admins.
func (s *Server) trainingRoutes(handle routeFunc) {
	handle("GET", "/v1/training/modules", httpx.CanRead, s.listTrainingModules)
	handle("POST", "/v1/training/modules", httpx.CanManage, s.createTrainingModule)
	handle("GET", "/v1/training/modules/{videoId}", httpx.CanRead, s.getTrainingModule)
	handle("GET", "/v1/training/modules/{videoId}/file", httpx.CanRead, s.downloadTrainingFile)
	handle("GET", "/v1/training/assignments", httpx.CanRead, s.listTrainingAssignments)
	handle("POST", "/v1/training/assignments", httpx.CanManage, s.createTrainingAssignments)
	handle("GET", "/v1/training/overview", httpx.CanRead, s.getTrainingOverview)
	handle("POST", "/v1/training/generate-certificate", httpx.CanRead, s.generateTrainingCertificate)
	handle("GET", "/v1/training/completions", httpx.CanRead, s.listTrainingCompletions)
	handle("GET", "/v1/training/completions/{completionId}", httpx.CanRead, s.getTrainingCompletion)
	handle("GET", "/v1/training/completions/{completionId}/certificate", httpx.CanRead, s.getTrainingCertificate)
	handle("POST", "/v1/training/completions/{videoId}/answers", httpx.CanSelf, s.submitTrainingAnswers)
	handle("POST", "/v1/training/completions/{videoId}/complete", httpx.CanSelf, s.completeTrainingVideo)
	handle("GET", "/v1/me/work", httpx.CanRead, s.getMyWork)
	handle("GET", "/v1/people/{id}/work", httpx.CanRead, s.getPersonWork)
}

func (s *Server) listTrainingModules(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	all, err := s.app.ListTrainingModules(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(all, p))
	return nil
}

// createTrainingModule takes JSON for a text module, or multipart/form-data
// with a file (video or PDF) and the fields title, summary and
// durationMinutes for an upload module.
func (s *Server) createTrainingModule(w http.ResponseWriter, r *http.Request) error {
	var in app.TrainingModuleInput
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		u, err := s.ParseUpload(w, r, "file")
		if err != nil {
			return err
		}
		defer u.Close()
		in = app.TrainingModuleInput{Title: u.Fields["title"], Summary: u.Fields["summary"], File: u.File, FileName: u.Filename, ContentType: u.Type}
		if v := u.Fields["durationMinutes"]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return httpx.BadRequest("durationMinutes", v, "durationMinutes must be a whole number of minutes")
			}
			in.DurationMinutes = n
		}
		if v := u.Fields["controlIds"]; v != "" {
			if err := json.Unmarshal([]byte(v), &in.ControlIDs); err != nil {
				return httpx.BadRequest("controlIds", v, "controlIds must be a JSON array of control ids")
			}
		}
	} else if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateTrainingModule(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getTrainingModule(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetTrainingModule(r.Context(), pathID(r, "videoId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) downloadTrainingFile(w http.ResponseWriter, r *http.Request) error {
	m, f, err := s.app.OpenTrainingFile(r.Context(), pathID(r, "videoId"))
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", m.File.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": m.File.Name}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("ETag", `"`+m.File.SHA256+`"`)
	var mod time.Time
	if m.UpdatedAt != nil {
		mod = *m.UpdatedAt
	}
	http.ServeContent(w, r, "", mod, f)
	return nil
}

func (s *Server) listTrainingAssignments(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListTrainingAssignments(r.Context(), app.TrainingAssignmentFilter{PersonID: q.Get("personId"),
		ModuleID: q.Get("moduleId"), Status: q.Get("status"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) createTrainingAssignments(w http.ResponseWriter, r *http.Request) error {
	var in app.TrainingAssignInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.AssignTraining(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getTrainingOverview(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.TrainingOverview(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"data": v})
	return nil
}

func (s *Server) listTrainingCompletions(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListTrainingCompletions(r.Context(), app.TrainingCompletionFilter{PersonID: q.Get("personId"),
		ModuleID: q.Get("moduleId"), Status: q.Get("status"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getTrainingCompletion(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetTrainingCompletion(r.Context(), pathID(r, "completionId"))
	return ok(w, http.StatusOK, v, err)
}

func writePDF(w http.ResponseWriter, pdf *app.ReportPDF) {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": pdf.Filename}))
	w.Header().Set("Content-Length", strconv.Itoa(len(pdf.Content)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pdf.Content)
}

func (s *Server) getTrainingCertificate(w http.ResponseWriter, r *http.Request) error {
	pdf, err := s.app.TrainingCertificate(r.Context(), pathID(r, "completionId"))
	if err != nil {
		return err
	}
	writePDF(w, pdf)
	return nil
}

// generateTrainingCertificate is the reference's generate-certificate: the
// certificate of a person's latest completion (of one module when moduleId
// is given). It reads; it changes nothing.
func (s *Server) generateTrainingCertificate(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		MemberID string `json:"memberId"`
		ModuleID string `json:"moduleId"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	pdf, err := s.app.LatestTrainingCertificate(r.Context(), in.MemberID, in.ModuleID)
	if err != nil {
		return err
	}
	writePDF(w, pdf)
	return nil
}

func (s *Server) submitTrainingAnswers(w http.ResponseWriter, r *http.Request) error {
	var in app.TrainingQuizSubmission
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SubmitTrainingQuiz(r.Context(), pathID(r, "videoId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) completeTrainingVideo(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.CompleteTrainingModule(r.Context(), pathID(r, "videoId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getMyWork(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.MyWork(r.Context())
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getPersonWork(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.PersonWork(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}
