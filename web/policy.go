package web

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// decodeIfBody decodes a JSON body when there is one; an empty body
// leaves dst as it is.
func decodeIfBody(r *http.Request, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return mbe
		}
		return badRequest("", nil, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return badRequest("Content-Type", ct, "Content-Type must be application/json")
	}
	return decodeBytes(body, dst)
}

// policyWithoutContent hides the content field (excludeContent=true): the
// outer nil field takes precedence over the embedded one.
type policyWithoutContent struct {
	*app.Policy
	Content *string `json:"content,omitempty"`
}

func (s *Server) listPolicies(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.PolicyFilter{Status: q.Get("status"), AssigneeID: q.Get("assigneeId"), Department: q.Get("department"),
		Frequency: q.Get("frequency"), ControlID: q.Get("controlId"), Search: q.Get("q"), Sort: q.Get("sort"),
		PersonID: q.Get("personId"), Page: p}
	for name, dst := range map[string]*bool{"includeArchived": &f.IncludeArchived, "archived": &f.Archived, "excludeContent": &f.ExcludeContent} {
		b, err := boolParam(r, name)
		if err != nil {
			return err
		}
		*dst = b != nil && *b
	}
	if f.Acknowledged, err = boolParam(r, "acknowledged"); err != nil {
		return err
	}
	l, err := s.app.ListPolicies(r.Context(), f)
	if err != nil {
		return err
	}
	if !f.ExcludeContent {
		writeList(w, p, l)
		return nil
	}
	items := make([]policyWithoutContent, len(l.Items))
	for i := range l.Items {
		items[i] = policyWithoutContent{Policy: &l.Items[i]}
	}
	writeList(w, p, app.List[policyWithoutContent]{Items: items, Total: l.Total})
	return nil
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.GetPolicy(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) createPolicy(w http.ResponseWriter, r *http.Request) error {
	var in app.PolicyInput
	if err := decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.CreatePolicy(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) updatePolicy(w http.ResponseWriter, r *http.Request) error {
	var in app.PolicyInput
	if err := decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.UpdatePolicy(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
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
	writeJSON(w, http.StatusOK, p)
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
	writeJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) listPolicyVersions(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListPolicyVersions(r.Context(), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) getPolicyVersion(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetPolicyVersion(r.Context(), pathID(r, "id"), pathID(r, "versionId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
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
	writeJSON(w, status, ack)
	return nil
}

// ackStatusBody is the list envelope plus the counts for the current version.
type ackStatusBody struct {
	Data    []app.PolicyAckStatus `json:"data"`
	Meta    meta                  `json:"meta"`
	Summary app.PolicyAckSummary  `json:"summary"`
}

func (s *Server) policyAcknowledgements(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	rep, err := s.app.PolicyAcknowledgements(r.Context(), pathID(r, "id"),
		app.PolicyAckFilter{Status: q.Get("status"), Role: q.Get("role"), Page: p})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ackStatusBody{Data: rep.People.Items, Meta: newMeta(p, rep.People.Total), Summary: rep.Summary})
	return nil
}

func (s *Server) listPolicyControls(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListPolicyControls(r.Context(), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) linkPolicyControls(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ControlIDs []string `json:"controlIds"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	p, err := s.app.LinkPolicyControls(r.Context(), pathID(r, "id"), in.ControlIDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) unlinkPolicyControl(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.UnlinkPolicyControl(r.Context(), pathID(r, "id"), pathID(r, "controlId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
