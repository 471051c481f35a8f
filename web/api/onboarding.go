package api

import (
	"net/http"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// onboardingRoutes registers the getting-started checklist of the
// dashboard: read it, dismiss it (owner, admin), as the web application does.
func (s *Server) onboardingRoutes(handle routeFunc) {
	handle("GET", "/v1/organization/onboarding", httpx.CanManage, s.getOnboarding)
	handle("POST", "/v1/organization/onboarding/dismiss", httpx.CanManage, s.dismissOnboarding)
}

type onboardingStepDTO struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Hint  string `json:"hint"`
	Path  string `json:"webPath"`
	Done  bool   `json:"done"`
}

type onboardingDTO struct {
	Steps       []onboardingStepDTO `json:"steps"`
	Done        int                 `json:"done"`
	Total       int                 `json:"total"`
	Complete    bool                `json:"complete"`
	DismissedAt *time.Time          `json:"dismissedAt"`
	Visible     bool                `json:"visible"`
}

func onboardingOut(o *app.Onboarding) onboardingDTO {
	out := onboardingDTO{Steps: make([]onboardingStepDTO, len(o.Steps)), Done: o.Done, Total: len(o.Steps),
		Complete: o.Complete(), DismissedAt: o.DismissedAt}
	for i, s := range o.Steps {
		out.Steps[i] = onboardingStepDTO{Key: s.Key, Title: s.Title, Hint: s.Hint, Path: s.Href, Done: s.Done}
	}
	out.Visible = !out.Complete && o.DismissedAt == nil
	return out
}

func (s *Server) getOnboarding(w http.ResponseWriter, r *http.Request) error {
	o, err := s.app.Onboarding(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, onboardingOut(o))
	return nil
}

func (s *Server) dismissOnboarding(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DismissOnboarding(r.Context()); err != nil {
		return err
	}
	o, err := s.app.Onboarding(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, onboardingOut(o))
	return nil
}
