package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// frameworkRoutes registers the routes of the handlers in this file.
func (s *Server) frameworkRoutes(handle routeFunc) {
	handle("GET", "/v1/frameworks", httpx.CanRead, s.listFrameworks)
	handle("POST", "/v1/frameworks", httpx.CanManage, s.createFramework)
	handle("GET", "/v1/frameworks/{frameworkId}", httpx.CanRead, s.getFramework)
	handle("PATCH", "/v1/frameworks/{frameworkId}", httpx.CanManage, s.updateFramework)
	handle("POST", "/v1/frameworks/{frameworkId}/enable", httpx.CanManage, s.enableFramework)
	handle("GET", "/v1/frameworks/{frameworkId}/requirements", httpx.CanRead, s.listRequirements)
	handle("POST", "/v1/frameworks/{frameworkId}/requirements", httpx.CanManage, s.addRequirement)
	handle("GET", "/v1/frameworks/{frameworkId}/requirements/{requirementId}", httpx.CanRead, s.getRequirement)
	handle("POST", "/v1/frameworks/{frameworkId}/requirements/{requirementId}/controls", httpx.CanManage, s.mapRequirementControls)

	handle("GET", "/v1/framework-editor/task-template", httpx.CanRead, s.listTaskTemplates)
	handle("POST", "/v1/framework-editor/task-template", httpx.CanManage, s.createTaskTemplate)
	handle("GET", "/v1/framework-editor/task-template/{id}", httpx.CanRead, s.getTaskTemplate)
	handle("PATCH", "/v1/framework-editor/task-template/{id}", httpx.CanManage, s.updateTaskTemplate)
	handle("DELETE", "/v1/framework-editor/task-template/{id}", httpx.CanManage, s.deleteTaskTemplate)
}

func (s *Server) listFrameworks(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	enabled, err := httpx.BoolParam(r, "enabled")
	if err != nil {
		return err
	}
	l, err := s.app.ListFrameworks(r.Context(), enabled, p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getFramework(w http.ResponseWriter, r *http.Request) error {
	f, err := s.app.GetFramework(r.Context(), pathID(r, "frameworkId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) createFramework(w http.ResponseWriter, r *http.Request) error {
	var in app.FrameworkInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	f, err := s.app.CreateCustomFramework(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, f)
	return nil
}

func (s *Server) updateFramework(w http.ResponseWriter, r *http.Request) error {
	var in app.FrameworkInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	f, err := s.app.UpdateCustomFramework(r.Context(), pathID(r, "frameworkId"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) enableFramework(w http.ResponseWriter, r *http.Request) error {
	res, err := s.app.EnableFramework(r.Context(), pathID(r, "frameworkId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) listRequirements(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListRequirements(r.Context(), pathID(r, "frameworkId"), p)
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, l)
	return nil
}

func (s *Server) getRequirement(w http.ResponseWriter, r *http.Request) error {
	req, err := s.app.GetRequirement(r.Context(), pathID(r, "frameworkId"), pathID(r, "requirementId"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, req)
	return nil
}

func (s *Server) addRequirement(w http.ResponseWriter, r *http.Request) error {
	var in app.RequirementInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	req, err := s.app.AddRequirement(r.Context(), pathID(r, "frameworkId"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, req)
	return nil
}

func (s *Server) mapRequirementControls(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ControlIDs []string `json:"controlIds"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	req, err := s.app.MapRequirementControls(r.Context(), pathID(r, "frameworkId"), pathID(r, "requirementId"), in.ControlIDs)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, req)
	return nil
}

func (s *Server) listTaskTemplates(w http.ResponseWriter, r *http.Request) error {
	p, err := httpx.PageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTaskTemplates(r.Context(), r.URL.Query().Get("frameworkId"))
	if err != nil {
		return err
	}
	httpx.WriteList(w, p, app.List[app.TaskTemplate]{Items: l[min(p.Offset(), len(l)):min(p.Offset()+p.PerPage, len(l))], Total: len(l)})
	return nil
}

func (s *Server) getTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := s.app.GetTaskTemplate(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) createTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskTemplateInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	t, err := s.app.CreateTaskTemplate(r.Context(), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, t)
	return nil
}

func (s *Server) updateTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskTemplateInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	t, err := s.app.UpdateTaskTemplate(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) deleteTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteTaskTemplate(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
