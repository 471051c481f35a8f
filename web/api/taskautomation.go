package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// taskAutomationRoutes registers the routes of the handlers in this file:
// the reference's nine Task Automations operations plus run-by-hand, one
// run with its logs, and the templates. Owners and admins manage; every
// role that sees the task reads.
func (s *Server) taskAutomationRoutes(handle routeFunc) {
	handle("GET", "/v1/task-automation-templates", httpx.CanRead, s.listTaskAutomationTemplates)
	handle("GET", "/v1/tasks/{taskId}/automations", httpx.CanRead, s.listTaskAutomations)
	handle("POST", "/v1/tasks/{taskId}/automations", httpx.CanManage, s.createTaskAutomation)
	handle("GET", "/v1/tasks/{taskId}/automations/runs", httpx.CanRead, s.listTaskAutomationRuns)
	handle("GET", "/v1/tasks/{taskId}/automations/{automationId}", httpx.CanRead, s.getTaskAutomation)
	handle("PATCH", "/v1/tasks/{taskId}/automations/{automationId}", httpx.CanManage, s.updateTaskAutomation)
	handle("DELETE", "/v1/tasks/{taskId}/automations/{automationId}", httpx.CanManage, s.deleteTaskAutomation)
	handle("GET", "/v1/tasks/{taskId}/automations/{automationId}/versions", httpx.CanRead, s.listTaskAutomationVersions)
	handle("POST", "/v1/tasks/{taskId}/automations/{automationId}/versions", httpx.CanManage, s.createTaskAutomationVersion)
	handle("GET", "/v1/tasks/{taskId}/automations/{automationId}/runs", httpx.CanRead, s.listTaskAutomationRunsOfOne)
	handle("POST", "/v1/tasks/{taskId}/automations/{automationId}/run", httpx.CanManage, s.runTaskAutomation)
	handle("GET", "/v1/tasks/{taskId}/automations/{automationId}/runs/{runId}", httpx.CanRead, s.getTaskAutomationRun)
}

func (s *Server) listTaskAutomationTemplates(w http.ResponseWriter, r *http.Request) error {
	l, err := s.app.ListAutomationTemplates(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteList(w, app.Page{Page: 1, PerPage: max(len(l), 1)}, app.List[app.AutomationTemplate]{Items: l, Total: len(l)})
	return nil
}

func (s *Server) listTaskAutomations(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTaskAutomations(r.Context(), pathID(r, "taskId"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) createTaskAutomation(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskAutomationInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateTaskAutomation(r.Context(), pathID(r, "taskId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getTaskAutomation(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetTaskAutomation(r.Context(), pathID(r, "taskId"), pathID(r, "automationId"))
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) updateTaskAutomation(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskAutomationInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.UpdateTaskAutomation(r.Context(), pathID(r, "taskId"), pathID(r, "automationId"), in)
	return ok(w, http.StatusOK, v, err)
}

func (s *Server) deleteTaskAutomation(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteTaskAutomation(r.Context(), pathID(r, "taskId"), pathID(r, "automationId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listTaskAutomationVersions(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListAutomationVersions(r.Context(), pathID(r, "taskId"), pathID(r, "automationId"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) createTaskAutomationVersion(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskAutomationVersionInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	v, err := s.app.CreateAutomationVersion(r.Context(), pathID(r, "taskId"), pathID(r, "automationId"), in)
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) listTaskAutomationRuns(w http.ResponseWriter, r *http.Request) error {
	return s.writeAutomationRuns(w, r, "")
}

func (s *Server) listTaskAutomationRunsOfOne(w http.ResponseWriter, r *http.Request) error {
	return s.writeAutomationRuns(w, r, pathID(r, "automationId"))
}

func (s *Server) writeAutomationRuns(w http.ResponseWriter, r *http.Request, automationID string) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListAutomationRuns(r.Context(), app.AutomationRunFilter{TaskID: pathID(r, "taskId"), AutomationID: automationID, Page: p})
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) runTaskAutomation(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.RunTaskAutomation(r.Context(), pathID(r, "taskId"), pathID(r, "automationId"))
	return ok(w, http.StatusCreated, v, err)
}

func (s *Server) getTaskAutomationRun(w http.ResponseWriter, r *http.Request) error {
	v, err := s.app.GetAutomationRun(r.Context(), pathID(r, "taskId"), pathID(r, "automationId"), pathID(r, "runId"))
	return ok(w, http.StatusOK, v, err)
}
