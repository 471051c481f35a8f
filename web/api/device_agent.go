package api

import (
	"net/http"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// deviceAgentRoutes registers the device routes beyond list and get (in
// people.go) and the device agent's API. The agent authenticates with its
// device token in X-Device-Token (check-in, status) or, to register, with an
// enrolment token in X-Enrolment-Token or as a signed-in person.
func (s *Server) deviceAgentRoutes(handle routeFunc) {
	handle("GET", "/v1/devices/member/{memberId}", httpx.CanRead, s.listMemberDevices)
	handle("DELETE", "/v1/devices/{id}", httpx.CanManage, s.deleteDevice)

	handle("GET", "/v1/device-agent/enrolment-tokens", httpx.CanManage, s.listEnrolmentTokens)
	handle("POST", "/v1/device-agent/enrolment-tokens", httpx.CanManage, s.createEnrolmentToken)
	handle("DELETE", "/v1/device-agent/enrolment-tokens/{id}", httpx.CanManage, s.revokeEnrolmentToken)
	handle("POST", "/v1/device-agent/register", httpx.Public, s.registerDevice)
	handle("POST", "/v1/device-agent/check-in", httpx.Public, s.checkInDevice)
	handle("GET", "/v1/device-agent/status", httpx.Public, s.getDeviceStatus)
	handle("DELETE", "/v1/device-agent/sessions/{deviceId}", httpx.CanManage, s.revokeAgentAccess)
	handle("GET", "/v1/device-agent/updates/{filename}", httpx.Public, s.getUpdateFile)
	handle("HEAD", "/v1/device-agent/updates/{filename}", httpx.Public, s.getUpdateFile)
	handle("POST", "/v1/device-agent/auth-code", httpx.CanSelf, s.createAgentAuthCode)
	handle("POST", "/v1/device-agent/exchange-code", httpx.Public, s.exchangeAgentCode)
	handle("GET", "/v1/device-agent/my-organizations", httpx.Public, s.myAgentOrganizations)
	handle("GET", "/v1/device-agent/mac", httpx.CanRead, s.downloadAgent("darwin", "arm64"))
	handle("GET", "/v1/device-agent/windows", httpx.CanRead, s.downloadAgent("windows", "amd64"))
	handle("GET", "/v1/device-agent/linux", httpx.CanRead, s.downloadAgent("linux", "amd64"))
}

func (s *Server) listMemberDevices(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListMemberDevices(r.Context(), pathID(r, "memberId"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) deleteDevice(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteDevice(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listEnrolmentTokens(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.app.ListEnrolmentTokens(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, app.Page{Page: 1, PerPage: max(len(ts), 1)}, app.List[app.EnrolmentToken]{Items: ts, Total: len(ts)})
	return nil
}

func (s *Server) createEnrolmentToken(w http.ResponseWriter, r *http.Request) error {
	var in app.EnrolmentTokenCreate
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	t, err := s.app.CreateEnrolmentToken(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, t)
	return nil
}

func (s *Server) revokeEnrolmentToken(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.RevokeEnrolmentToken(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) registerDevice(w http.ResponseWriter, r *http.Request) error {
	var in app.DeviceRegister
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	var reg *app.DeviceRegistration
	var err error
	if sess := strings.TrimSpace(r.Header.Get("X-Agent-Session")); sess != "" {
		reg, err = s.app.RegisterDeviceWithAgentSession(r.Context(), sess, in)
	} else {
		reg, err = s.app.RegisterDevice(r.Context(), strings.TrimSpace(r.Header.Get("X-Enrolment-Token")), in)
	}
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, reg)
	return nil
}

// deviceToken is the agent's credential; a missing one is 401.
func deviceToken(r *http.Request) (string, error) {
	t := strings.TrimSpace(r.Header.Get("X-Device-Token"))
	if t == "" {
		return "", app.ErrUnauthenticated
	}
	return t, nil
}

func (s *Server) checkInDevice(w http.ResponseWriter, r *http.Request) error {
	tok := strings.TrimSpace(r.Header.Get("X-Device-Token"))
	var in app.DeviceCheckIn
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	res, err := s.app.CheckInDevice(r.Context(), tok, in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, res)
	return nil
}

func (s *Server) getDeviceStatus(w http.ResponseWriter, r *http.Request) error {
	tok, err := deviceToken(r)
	if err != nil {
		return err
	}
	d, err := s.app.DeviceAgentStatus(r.Context(), tok, r.URL.Query().Get("deviceId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) revokeAgentAccess(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.RevokeDeviceAgent(r.Context(), pathID(r, "deviceId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// serveAgentFile streams a file of the agent downloads directory.
func (s *Server) serveAgentFile(w http.ResponseWriter, r *http.Request, name string) error {
	f, st, err := s.app.AgentDownload(name)
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+st.Name()+`"`)
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
	return nil
}

func (s *Server) getUpdateFile(w http.ResponseWriter, r *http.Request) error {
	return s.serveAgentFile(w, r, pathID(r, "filename"))
}

// downloadAgent serves the agent for one operating system; ?arch= picks
// amd64 or arm64.
func (s *Server) downloadAgent(goos, arch string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a := arch
		if q := r.URL.Query().Get("arch"); q != "" {
			if q != "amd64" && q != "arm64" {
				return app.Invalid("arch", app.CodeInvalidEnum, q, "arch must be one of amd64, arm64")
			}
			a = q
		}
		return s.serveAgentFile(w, r, app.AgentFileName(goos, a))
	}
}

// createAgentAuthCode approves an agent sign-in for the caller (the
// /agent/authorize page does the same for a signed-in browser).
func (s *Server) createAgentAuthCode(w http.ResponseWriter, r *http.Request) error {
	var in app.AgentAuthCodeInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	res, err := s.app.CreateAgentAuthCode(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, res)
	return nil
}

func (s *Server) exchangeAgentCode(w http.ResponseWriter, r *http.Request) error {
	var in app.AgentExchangeInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	res, err := s.app.ExchangeAgentCode(r.Context(), in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusCreated, res)
	return nil
}

func (s *Server) myAgentOrganizations(w http.ResponseWriter, r *http.Request) error {
	orgs, err := s.app.MyAgentOrganizations(r.Context(), strings.TrimSpace(r.Header.Get("X-Agent-Session")))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"organizations": orgs})
	return nil
}
