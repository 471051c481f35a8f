package api

import (
	"net/http"
	"strconv"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// integrationTaskRoutes registers the Task Integrations group: the checks
// that evidence a task or a task template, a run of one check for a task,
// per-task disconnection of a check, and the task's runs.
func (s *Server) integrationTaskRoutes(handle routeFunc) {
	handle("GET", "/v1/integrations/tasks/template/{templateId}/checks", httpx.CanRead, s.getChecksForTaskTemplate)
	handle("GET", "/v1/integrations/tasks/{taskId}/checks", httpx.CanRead, s.getChecksForTask)
	handle("POST", "/v1/integrations/tasks/{taskId}/run-check", httpx.CanManage, s.runCheckForTask)
	handle("POST", "/v1/integrations/tasks/{taskId}/checks/disconnect", httpx.CanManage, s.disconnectCheckFromTask)
	handle("POST", "/v1/integrations/tasks/{taskId}/checks/reconnect", httpx.CanManage, s.reconnectCheckToTask)
	handle("GET", "/v1/integrations/tasks/{taskId}/runs", httpx.CanRead, s.getTaskCheckRuns)
}

func (s *Server) getChecksForTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetChecksForTaskTemplate(r.Context(), pathID(r, "templateId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getChecksForTask(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetChecksForTask(r.Context(), pathID(r, "taskId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) runCheckForTask(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskCheckRequest
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.RunCheckForTask(r.Context(), pathID(r, "taskId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) disconnectCheckFromTask(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskCheckRequest
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SetTaskCheckDisabled(r.Context(), pathID(r, "taskId"), in, true)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) reconnectCheckToTask(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskCheckRequest
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.SetTaskCheckDisabled(r.Context(), pathID(r, "taskId"), in, false)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) getTaskCheckRuns(w http.ResponseWriter, r *http.Request) error {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return app.Invalid("limit", app.CodeInvalid, v, "limit must be an integer between 1 and 100")
		}
		if n == 0 {
			n = -1 // 0 given explicitly is out of range, not the default
		}
		limit = n
	}
	runs, err := s.app.ListTaskCheckRuns(r.Context(), pathID(r, "taskId"), limit)
	if err != nil {
		return err
	}
	return ok(w, http.StatusOK, map[string]any{"taskId": pathID(r, "taskId"), "runs": runs}, nil)
}
