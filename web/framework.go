package web

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

func (s *Server) listFrameworks(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	enabled, err := boolParam(r, "enabled")
	if err != nil {
		return err
	}
	l, err := s.app.ListFrameworks(r.Context(), enabled, p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) getFramework(w http.ResponseWriter, r *http.Request) error {
	f, err := s.app.GetFramework(r.Context(), pathID(r, "frameworkId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) createFramework(w http.ResponseWriter, r *http.Request) error {
	var in app.FrameworkInput
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := s.app.CreateCustomFramework(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, f)
	return nil
}

func (s *Server) updateFramework(w http.ResponseWriter, r *http.Request) error {
	var in app.FrameworkInput
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := s.app.UpdateCustomFramework(r.Context(), pathID(r, "frameworkId"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) enableFramework(w http.ResponseWriter, r *http.Request) error {
	res, err := s.app.EnableFramework(r.Context(), pathID(r, "frameworkId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) listRequirements(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListRequirements(r.Context(), pathID(r, "frameworkId"), p)
	if err != nil {
		return err
	}
	writeList(w, p, l)
	return nil
}

func (s *Server) getRequirement(w http.ResponseWriter, r *http.Request) error {
	req, err := s.app.GetRequirement(r.Context(), pathID(r, "frameworkId"), pathID(r, "requirementId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, req)
	return nil
}

func (s *Server) addRequirement(w http.ResponseWriter, r *http.Request) error {
	var in app.RequirementInput
	if err := decode(r, &in); err != nil {
		return err
	}
	req, err := s.app.AddRequirement(r.Context(), pathID(r, "frameworkId"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, req)
	return nil
}

func (s *Server) mapRequirementControls(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ControlIDs []string `json:"controlIds"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	req, err := s.app.MapRequirementControls(r.Context(), pathID(r, "frameworkId"), pathID(r, "requirementId"), in.ControlIDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, req)
	return nil
}

func (s *Server) listTaskTemplates(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	l, err := s.app.ListTaskTemplates(r.Context(), r.URL.Query().Get("frameworkId"))
	if err != nil {
		return err
	}
	writeList(w, p, app.List[app.TaskTemplate]{Items: l[min(p.Offset(), len(l)):min(p.Offset()+p.PerPage, len(l))], Total: len(l)})
	return nil
}

func (s *Server) getTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := s.app.GetTaskTemplate(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) createTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskTemplateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.app.CreateTaskTemplate(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, t)
	return nil
}

func (s *Server) updateTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.TaskTemplateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.app.UpdateTaskTemplate(r.Context(), pathID(r, "id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) deleteTaskTemplate(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.DeleteTaskTemplate(r.Context(), pathID(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
