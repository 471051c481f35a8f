package api

import (
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// incidentRoutes registers the routes of the handlers in this file.
// Everyone but auditors may report an incident and add to its timeline
// (CanSelf); the services narrow employees and contractors to incidents
// they reported and keep closing for owners and admins.
func (s *Server) incidentRoutes(handle routeFunc) {
	handle("GET", "/v1/incident-profile", httpx.CanRead, s.getIncidentProfile)
	handle("PATCH", "/v1/incident-profile", httpx.CanManage, s.updateIncidentProfile)

	handle("GET", "/v1/incidents", httpx.CanRead, s.listIncidents)
	handle("POST", "/v1/incidents", httpx.CanSelf, s.createIncident)
	handle("GET", "/v1/incidents/{id}", httpx.CanRead, s.getIncident)
	handle("PATCH", "/v1/incidents/{id}", httpx.CanManage, s.updateIncident)
	handle("POST", "/v1/incidents/{id}/status", httpx.CanSelf, s.setIncidentStatus)
	handle("GET", "/v1/incidents/{id}/timeline", httpx.CanRead, s.listIncidentTimeline)
	handle("POST", "/v1/incidents/{id}/timeline", httpx.CanSelf, s.addIncidentTimelineEntry)
	handle("GET", "/v1/incidents/{id}/applicability", httpx.CanRead, s.getIncidentApplicability)
	handle("POST", "/v1/incidents/{id}/regimes", httpx.CanManage, s.confirmIncidentRegimes)
	handle("PUT", "/v1/incidents/{id}/dora-classification", httpx.CanManage, s.classifyIncidentDora)
	handle("GET", "/v1/incidents/{id}/reports", httpx.CanRead, s.listIncidentReports)
	handle("GET", "/v1/incidents/{id}/reports/{reportId}", httpx.CanRead, s.getIncidentReport)
	handle("PATCH", "/v1/incidents/{id}/reports/{reportId}", httpx.CanManage, s.saveIncidentReportDraft)
	handle("POST", "/v1/incidents/{id}/reports/{reportId}/send", httpx.CanManage, s.sendIncidentReport)
	handle("GET", "/v1/incidents/{id}/reports/{reportId}/versions", httpx.CanRead, s.listIncidentReportVersions)
	handle("GET", "/v1/incidents/{id}/reports/{reportId}/pdf", httpx.CanRead, s.getIncidentReportPdf)
}

func (s *Server) getIncidentProfile(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetIncidentProfile(r.Context())
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) updateIncidentProfile(w http.ResponseWriter, r *http.Request) error {
	var in app.IncidentProfileInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateIncidentProfile(r.Context(), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listIncidents(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.IncidentFilter{Status: q.Get("status"), Type: q.Get("type"), Regime: q.Get("regime"), Page: p}
	if f.Overdue, err = httpx.BoolParam(r, "overdue"); err != nil {
		return err
	}
	l, err := s.app.ListIncidents(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) createIncident(w http.ResponseWriter, r *http.Request) error {
	var in app.IncidentInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateIncident(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getIncident(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetIncident(r.Context(), pathID(r, "id"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) updateIncident(w http.ResponseWriter, r *http.Request) error {
	var in app.IncidentInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateIncident(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) setIncidentStatus(w http.ResponseWriter, r *http.Request) error {
	var in app.IncidentStatusInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SetIncidentStatus(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listIncidentTimeline(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTimeline(r.Context(), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) addIncidentTimelineEntry(w http.ResponseWriter, r *http.Request) error {
	var in app.TimelineInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.AddTimelineEntry(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getIncidentApplicability(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.IncidentApplicability(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"incidentId": pathID(r, "id"), "regimes": v})
	return nil
}

func (s *Server) confirmIncidentRegimes(w http.ResponseWriter, r *http.Request) error {
	var in app.RegimesInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.ConfirmIncidentRegimes(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) classifyIncidentDora(w http.ResponseWriter, r *http.Request) error {
	var in app.DORAInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.ClassifyIncidentDORA(r.Context(), pathID(r, "id"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listIncidentReports(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	all, err := s.app.ListIncidentReports(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(all, p))
	return nil
}

func (s *Server) getIncidentReport(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetIncidentReport(r.Context(), pathID(r, "id"), pathID(r, "reportId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) saveIncidentReportDraft(w http.ResponseWriter, r *http.Request) error {
	var in app.ReportDraftInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SaveReportDraft(r.Context(), pathID(r, "id"), pathID(r, "reportId"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) sendIncidentReport(w http.ResponseWriter, r *http.Request) error {
	var in app.ReportSendInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SendIncidentReport(r.Context(), pathID(r, "id"), pathID(r, "reportId"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) listIncidentReportVersions(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	all, err := s.app.ListReportVersions(r.Context(), pathID(r, "id"), pathID(r, "reportId"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, pageOf(all, p))
	return nil
}

func (s *Server) getIncidentReportPdf(w http.ResponseWriter, r *http.Request) error {
	n := 0
	if v := r.URL.Query().Get("version"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return httpx.BadRequest("version", v, "version must be a positive integer")
		}
	}
	pdf, err := s.app.IncidentReportPDF(r.Context(), pathID(r, "id"), pathID(r, "reportId"), n)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+pdf.Filename+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(pdf.Content)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pdf.Content)
	return nil
}
