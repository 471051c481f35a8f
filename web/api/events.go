package api

import (
	"net/http"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// eventsRoutes registers the routes of the handlers in this file.
func (s *Server) eventsRoutes(handle routeFunc) {
	handle("GET", "/v1/webhooks", httpx.CanManage, s.listWebhooks)
	handle("POST", "/v1/webhooks", httpx.CanManage, s.createWebhook)
	handle("GET", "/v1/webhooks/{id}", httpx.CanManage, s.getWebhook)
	handle("PATCH", "/v1/webhooks/{id}", httpx.CanManage, s.updateWebhook)
	handle("DELETE", "/v1/webhooks/{id}", httpx.CanManage, s.deleteWebhook)
	handle("POST", "/v1/webhooks/{id}/ping", httpx.CanManage, s.pingWebhook)
	handle("POST", "/v1/webhooks/{id}/rotate-secret", httpx.CanManage, s.rotateWebhookSecret)
	handle("GET", "/v1/webhooks/{id}/deliveries", httpx.CanManage, s.listDeliveries)
	handle("GET", "/v1/webhooks/{id}/deliveries/{deliveryId}", httpx.CanManage, s.getDelivery)
	handle("POST", "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", httpx.CanManage, s.redeliver)

	handle("GET", "/v1/audit-log", httpx.CanAuditRd, s.listAuditLog)
	handle("GET", "/v1/scheduler/jobs", httpx.CanManage, s.listJobs)
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListWebhooks(r.Context(), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var in app.WebhookInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	h, err := s.app.CreateWebhook(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, h)
	return nil
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	h, err := s.app.GetWebhook(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, h)
	return nil
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	var in app.WebhookInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	h, err := s.app.UpdateWebhook(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, h)
	return nil
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteWebhook(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) pingWebhook(w http.ResponseWriter, r *http.Request) error {
	d, err := s.app.PingWebhook(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusAccepted, d)
	return nil
}

func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	h, err := s.app.RotateWebhookSecret(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, h)
	return nil
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	l, err := s.app.ListDeliveries(r.Context(), pathID(r, "id"), app.DeliveryFilter{Status: q.Get("status"), Event: q.Get("event"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getDelivery(w http.ResponseWriter, r *http.Request) error {
	d, err := s.app.GetDelivery(r.Context(), pathID(r, "id"), pathID(r, "deliveryId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) redeliver(w http.ResponseWriter, r *http.Request) error {
	d, err := s.app.Redeliver(r.Context(), pathID(r, "id"), pathID(r, "deliveryId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusAccepted, d)
	return nil
}

// timeParam reads a YYYY-MM-DD date or an RFC 3339 time. With endOfDay a
// bare date means the end of that day (an inclusive upper bound).
func timeParam(r *http.Request, name string, endOfDay bool) (*time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	if d, err := time.Parse("2006-01-02", v); err == nil {
		if endOfDay {
			d = d.AddDate(0, 0, 1)
		}
		return &d, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, httpx.BadRequest(name, v, "%s must be a date (YYYY-MM-DD) or an RFC 3339 time", name)
	}
	t = t.UTC()
	if endOfDay {
		t = t.Truncate(time.Millisecond).Add(time.Millisecond)
	}
	return &t, nil
}

func (s *Server) listAuditLog(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.AuditFilter{ResourceType: q.Get("resourceType"), ResourceID: q.Get("resourceId"), ActorID: q.Get("actorId"),
		Action: q.Get("action"), Page: p}
	if f.From, err = timeParam(r, "from", false); err != nil {
		return err
	}
	if f.To, err = timeParam(r, "to", true); err != nil {
		return err
	}
	l, err := s.app.ListAuditLog(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	jobs, err := s.app.ListJobs(r.Context())
	if err != nil {
		return err
	}
	l := app.List[app.JobStatus]{Items: []app.JobStatus{}, Total: len(jobs)}
	if off := p.Offset(); off < len(jobs) {
		l.Items = jobs[off:min(len(jobs), off+p.PerPage)]
	}
	httpx.WriteList(w, p, l)
	return nil
}
