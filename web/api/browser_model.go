package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// Browser automation helpers: steps drafted from an instruction by the
// configured model, login page analysis on the appliance's Chromium, and
// MFA setup instructions. Routes are registered in browserRoutes.

func (s *Server) draftBrowserStepsFromInstruction(w http.ResponseWriter, r *http.Request) error {
	var in app.BrowserInstructionInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.DraftBrowserStepsFromInstruction(r.Context(), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) analyzeLogin(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		URL string `json:"url"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.AnalyzeLogin(r.Context(), in.URL)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getMFAInstructions(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetMFAInstructions(r.Context(), r.URL.Query().Get("host"))
	return ok(w, http.StatusOK, v, err)
}
