package ui

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/compliance-appliance/compliance/app"
	"github.com/gorilla/mux"
)

// uiCommentRoutes registers adding, editing and deleting comments on the
// detail pages of vendors, risks, findings and controls (owners, admins and
// auditors signed in as people; a comment is changed only by its author or
// an owner or admin, as in the API).
func (s *Server) uiCommentRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	for _, e := range []struct {
		typ, section string
		detail       uiHandler
	}{
		{app.EntityVendor, "vendors", s.uiVendor},
		{app.EntityRisk, "risks", s.uiRisk},
		{app.EntityFinding, "findings", s.uiFinding},
		{app.EntityControl, "controls", s.uiControl},
		{app.EntityIncident, "incidents", s.uiIncident},
	} {
		page("POST", "/"+e.section+"/{id}/comments", uiReview, s.uiAddComment(e.typ, e.section, e.detail))
		page("POST", "/"+e.section+"/{id}/comments/{commentId}", uiReview, s.uiEditComment(e.typ, e.section, e.detail))
		page("POST", "/"+e.section+"/{id}/comments/{commentId}/delete", uiReview, s.uiDeleteComment(e.typ, e.section))
	}
}

func init() {
	flashes["comment-saved"] = "Comment saved."
	flashes["comment-deleted"] = "Comment deleted."
}

// uiComment is a comment with its author's name for display, and whether
// the signed-in person may change it.
type uiComment struct {
	app.Comment
	Author  string
	CanEdit bool
	Edited  bool
}

// mayChangeComment mirrors the service's rule: the comment's author (the
// same person or key), or an owner or admin, holding the review capability.
func mayChangeComment(p *app.Principal, c *app.Comment) bool {
	if p == nil || !p.Can(app.CapReview) {
		return false
	}
	if p.Role == app.RoleOwner || p.Role == app.RoleAdmin {
		return true
	}
	return p.ActorType() == c.AuthorType && p.ActorID() == c.AuthorID
}

// actorNames maps person ids to names, for authors and uploaders.
func (s *Server) actorNames(r *http.Request) (map[string]string, error) {
	ps, err := s.app.ListPeople(r.Context(), app.PersonFilter{Inactive: true, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, p := range ps.Items {
		names[p.ID] = p.Name
	}
	return names, nil
}

// actorName names who wrote or uploaded something.
func actorName(names map[string]string, typ, id string) string {
	switch name := names[id]; {
	case name != "":
		return name
	case typ == "api_key":
		return "API key"
	case typ == "system":
		return "System"
	}
	return "Former member"
}

// addComments puts the comments of a resource and the forms' targets on
// the page's data. ?edit=<commentId> shows that comment's text in a box to
// change it, ?delete=<commentId> asks to confirm its deletion; both only
// for a comment the person may change.
func (s *Server) addComments(r *http.Request, v *view, entityType, section, entityID string) error {
	data, ok := v.Data.(map[string]any)
	if !ok || entityID == "" {
		return nil
	}
	l, err := s.app.ListComments(r.Context(), entityType, entityID, app.Page{Page: 1, PerPage: app.MaxPerPage})
	if errors.Is(err, app.ErrNotFound) {
		return nil // not assigned to an employee or contractor: no comments for them
	}
	if err != nil {
		return err
	}
	names := map[string]string{}
	if len(l.Items) > 0 {
		if names, err = s.actorNames(r); err != nil {
			return err
		}
	}
	q := r.URL.Query()
	editID, deleteID := q.Get("edit"), q.Get("delete")
	if cid := mux.Vars(r)["commentId"]; cid != "" && v.Errors["commentEdit"] != "" {
		editID = cid // a rejected edit: the box again, with its message
	}
	out := make([]uiComment, 0, len(l.Items))
	for _, c := range l.Items {
		uc := uiComment{Comment: c, Author: actorName(names, c.AuthorType, c.AuthorID), CanEdit: mayChangeComment(v.P, &c),
			Edited: c.UpdatedAt.After(c.CreatedAt)}
		if uc.CanEdit && c.ID == editID {
			data["CommentEdit"] = c.ID
		}
		if uc.CanEdit && c.ID == deleteID {
			data["CommentDelete"] = c.ID
		}
		out = append(out, uc)
	}
	base := "/" + section + "/" + url.PathEscape(entityID)
	data["Comments"] = out
	data["CommentsTotal"] = l.Total
	data["CommentBase"] = base
	data["CommentAction"] = base + "/comments"
	return nil
}

// uiAddComment adds a comment and returns to the resource's page; a bad
// comment shows that page again with the message under the comment box.
func (s *Server) uiAddComment(entityType, section string, detail uiHandler) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		text := r.PostForm.Get("comment")
		_, err := s.app.CreateComment(r.Context(), app.CommentInput{EntityType: app.Ptr(entityType), EntityID: app.Ptr(id(r)), Content: &text})
		if err != nil {
			if !formErrors(err, v, r) {
				return err
			}
			// The comment box is named "comment": the resource's own
			// form fields keep their values.
			msg := v.Errors["content"]
			v.Errors = map[string]string{"comment": msg}
			v.Form = url.Values{"comment": {text}}
			return detail(w, r, v)
		}
		return redirect(w, r, "/"+section+"/"+url.PathEscape(id(r))+"?done=commented#comments")
	}
}

// entityComment returns a comment of the resource in the path: a comment
// of another resource, or of another organization, is not found.
func (s *Server) entityComment(r *http.Request, entityType string) (*app.Comment, error) {
	c, err := s.app.GetComment(r.Context(), mux.Vars(r)["commentId"])
	if err != nil {
		return nil, err
	}
	if c.EntityType != entityType || c.EntityID != id(r) {
		return nil, app.ErrNotFound
	}
	return c, nil
}

// uiEditComment changes a comment's text; a bad text shows the page again
// with the box open and the message under it.
func (s *Server) uiEditComment(entityType, section string, detail uiHandler) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		c, err := s.entityComment(r, entityType)
		if err != nil {
			return err
		}
		text := r.PostForm.Get("commentEdit")
		if _, err := s.app.UpdateComment(r.Context(), c.ID, app.CommentInput{Content: &text}); err != nil {
			if !formErrors(err, v, r) {
				return err
			}
			v.Errors = map[string]string{"commentEdit": v.Errors["content"]}
			v.Form = url.Values{"commentEdit": {text}}
			return detail(w, r, v)
		}
		return redirect(w, r, "/"+section+"/"+url.PathEscape(id(r))+"?done=comment-saved#comment-"+url.PathEscape(c.ID))
	}
}

// uiDeleteComment deletes a comment (the page asked to confirm first).
func (s *Server) uiDeleteComment(entityType, section string) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		c, err := s.entityComment(r, entityType)
		if err != nil {
			return err
		}
		if err := s.app.DeleteComment(r.Context(), c.ID); err != nil {
			return err
		}
		return redirect(w, r, "/"+section+"/"+url.PathEscape(id(r))+"?done=comment-deleted#comments")
	}
}
