package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// policyRoutes registers the routes of the handlers in this file.
func (s *Server) policyRoutes(handle routeFunc) {
	handle("GET", "/v1/policies", httpx.CanRead, s.listPolicies)
	handle("POST", "/v1/policies", httpx.CanManage, s.createPolicy)
	handle("GET", "/v1/policies/{id}", httpx.CanRead, s.getPolicy)
	handle("PATCH", "/v1/policies/{id}", httpx.CanManage, s.updatePolicy)
	handle("DELETE", "/v1/policies/{id}", httpx.CanManage, s.deletePolicy)
	handle("GET", "/v1/policies/{id}/preview", httpx.CanRead, s.previewPolicy)
	handle("POST", "/v1/policies/{id}/publish", httpx.CanManage, s.publishPolicy)
	handle("GET", "/v1/policies/{id}/versions", httpx.CanRead, s.listPolicyVersions)
	handle("GET", "/v1/policies/{id}/versions/{versionId}", httpx.CanRead, s.getPolicyVersion)
	handle("POST", "/v1/policies/{id}/acknowledge", httpx.CanSelf, s.acknowledgePolicy)
	handle("GET", "/v1/policies/{id}/acknowledgements", httpx.CanRead, s.policyAcknowledgements)
	handle("GET", "/v1/policies/{id}/controls", httpx.CanRead, s.listPolicyControls)
	handle("POST", "/v1/policies/{id}/controls", httpx.CanManage, s.linkPolicyControls)
	handle("DELETE", "/v1/policies/{id}/controls/{controlId}", httpx.CanManage, s.unlinkPolicyControl)
}

// decodeIfBody decodes a JSON body when there is one; an empty body
// leaves dst as it is.
func decodeIfBody(r *http.Request, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, httpx.MaxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return mbe
		}
		return httpx.BadRequest("", nil, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return httpx.BadRequest("Content-Type", ct, "Content-Type must be application/json")
	}
	return httpx.DecodeBytes(body, dst)
}

// policyWithoutContent hides the content field (excludeContent=true): the
// outer nil field takes precedence over the embedded one.
type policyWithoutContent struct {
	*app.Policy
	Content *string `json:"content,omitempty"`
}

func (s *Server) listPolicies(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.PolicyFilter{Status: q.Get("status"), AssigneeID: q.Get("assigneeId"), Department: q.Get("department"),
		Frequency: q.Get("frequency"), ControlID: q.Get("controlId"), Search: q.Get("q"), Sort: q.Get("sort"),
		PersonID: q.Get("personId"), Page: p}
	for name, dst := range map[string]*bool{"includeArchived": &f.IncludeArchived, "archived": &f.Archived, "excludeContent": &f.ExcludeContent} {
		b, err := httpx.BoolParam(r, name)
		if err != nil {
			return err
		}
		*dst = b != nil && *b
	}
	if f.Acknowledged, err = httpx.BoolParam(r, "acknowledged"); err != nil {
		return err
	}
	l, err := s.app.ListPolicies(r.Context(), f)
	if err != nil {
		return err
	}
	if !f.ExcludeContent {
		httpx.WriteList(w, p, l)
		return nil
	}
	items := make([]policyWithoutContent, len(l.Items))
	for i := range l.Items {
		items[i] = policyWithoutContent{Policy: &l.Items[i]}
	}
	httpx.WriteList(w, p, app.List[policyWithoutContent]{Items: items, Total: l.Total})
	return nil
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.GetPolicy(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) createPolicy(w http.ResponseWriter, r *http.Request) error {
	var in app.PolicyInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.CreatePolicy(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) updatePolicy(w http.ResponseWriter, r *http.Request) error {
	var in app.PolicyInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.UpdatePolicy(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) deletePolicy(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeletePolicy(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) previewPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.PreviewPolicy(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) publishPolicy(w http.ResponseWriter, r *http.Request) error {
	var in app.PublishInput
	if err := decodeIfBody(r, &in); err != nil {
		return err
	}
	v, err := s.app.PublishPolicy(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) listPolicyVersions(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListPolicyVersions(r.Context(), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getPolicyVersion(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetPolicyVersion(r.Context(), pathID(r, "id"), pathID(r, "versionId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) acknowledgePolicy(w http.ResponseWriter, r *http.Request) error {
	var in app.AcknowledgeInput
	if err := decodeIfBody(r, &in); err != nil {
		return err
	}
	ack, created, err := s.app.AcknowledgePolicy(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpx.WriteJSON(w, status, ack)
	return nil
}

// ackStatusBody is the list envelope plus the counts for the current version.
type ackStatusBody struct {
	Data    []app.PolicyAckStatus `json:"data"`
	Meta    httpx.Meta            `json:"meta"`
	Summary app.PolicyAckSummary  `json:"summary"`
}

func (s *Server) policyAcknowledgements(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	rep, err := s.app.PolicyAcknowledgements(r.Context(), pathID(r, "id"),
		app.PolicyAckFilter{Status: q.Get("status"), Role: q.Get("role"), Page: p})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, ackStatusBody{Data: rep.People.Items, Meta: httpx.NewMeta(p, rep.People.Total), Summary: rep.Summary})
	return nil
}

func (s *Server) listPolicyControls(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListPolicyControls(r.Context(), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) linkPolicyControls(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ControlIDs []string `json:"controlIds"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.LinkPolicyControls(r.Context(), pathID(r, "id"), in.ControlIDs)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) unlinkPolicyControl(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.UnlinkPolicyControl(r.Context(), pathID(r, "id"), pathID(r, "controlId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
