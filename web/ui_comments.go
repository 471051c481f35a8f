package web

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/compliance-appliance/compliance/app"
)

// uiCommentRoutes registers adding comments to the detail pages of
// vendors, risks, findings and controls (owners, admins and auditors
// signed in as people).
func (s *Server) uiCommentRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("POST", "/vendors/{id}/comments", uiReview, s.uiAddComment(app.EntityVendor, "vendors", s.uiVendor))
	page("POST", "/risks/{id}/comments", uiReview, s.uiAddComment(app.EntityRisk, "risks", s.uiRisk))
	page("POST", "/findings/{id}/comments", uiReview, s.uiAddComment(app.EntityFinding, "findings", s.uiFinding))
	page("POST", "/controls/{id}/comments", uiReview, s.uiAddComment(app.EntityControl, "controls", s.uiControl))
}

// uiComment is a comment with its author's name for display.
type uiComment struct {
	app.Comment
	Author string
}

// addComments puts the comments of a resource and the form's target on
// the page's data.
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
		ps, err := s.app.ListPeople(r.Context(), app.PersonFilter{Inactive: true, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
		if err != nil {
			return err
		}
		for _, p := range ps.Items {
			names[p.ID] = p.Name
		}
	}
	out := make([]uiComment, 0, len(l.Items))
	for _, c := range l.Items {
		name := names[c.AuthorID]
		switch {
		case name != "":
		case c.AuthorType == "api_key":
			name = "API key"
		case c.AuthorType == "system":
			name = "System"
		default:
			name = "Former member"
		}
		out = append(out, uiComment{Comment: c, Author: name})
	}
	data["Comments"] = out
	data["CommentsTotal"] = l.Total
	data["CommentAction"] = "/" + section + "/" + url.PathEscape(entityID) + "/comments"
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
