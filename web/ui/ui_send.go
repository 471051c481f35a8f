package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// Sending questionnaires to vendors: the vendor page lists the vendor's
// questionnaires and offers "Send a questionnaire" (owner, admin); the
// answer page shows the vendor's secret link once, never in a URL of ours.

// uiSendRoutes registers sending, re-sending and deleting questionnaires.
func (s *Server) uiSendRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("GET", "/vendors/{id}/questionnaires/new", uiManage, s.uiNewVendorQuestionnaire)
	page("POST", "/vendors/{id}/questionnaires", uiManage, s.uiSendVendorQuestionnaire)
	page("POST", "/questionnaires/{id}/send", uiManage, s.uiResendQuestionnaire)
	page("POST", "/questionnaires/{id}/delete", uiManage, s.uiDeleteQuestionnaire)
}

// sendFlashes are the confirmations of these pages.
var sendFlashes = map[string]string{
	"questionnaire-deleted": "Questionnaire deleted; its vendor link no longer works.",
}

func init() {
	for k, v := range sendFlashes {
		flashes[k] = v
	}
}

// sentView is a vendor link as shown once to its sender.
type sentView struct {
	URL       string
	ExpiresAt time.Time
}

// addVendorQuestionnaires puts a vendor's questionnaires on its page for
// the roles that may read questionnaires.
func (s *Server) addVendorQuestionnaires(r *http.Request, v *view, vendorID string) error {
	data, ok := v.Data.(map[string]any)
	if !ok || vendorID == "" || v.P.SeesOnlyAssigned() {
		return nil
	}
	l, err := s.app.ListQuestionnaires(r.Context(), app.QuestionnaireFilter{VendorID: vendorID, Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return err
	}
	data["Questionnaires"], data["QuestionnaireTotal"], data["ShowQuestionnaires"] = l.Items, l.Total, true
	return nil
}

// sendForm renders the form that sends a questionnaire to a vendor.
func (s *Server) sendForm(w http.ResponseWriter, r *http.Request, v *view, vd *app.Vendor) error {
	earlier, err := s.app.ListQuestionnaires(r.Context(), app.QuestionnaireFilter{Page: app.Page{Page: 1, PerPage: app.MaxPerPage}})
	if err != nil {
		return err
	}
	v.Title, v.Section = "Send a questionnaire to "+vd.Name, "vendors"
	def := ""
	if ts := s.app.QuestionnaireTemplates(); len(ts) > 0 {
		def = "template:" + ts[0].ID
	}
	v.Data = map[string]any{"V": vd, "Templates": s.app.QuestionnaireTemplates(), "Earlier": earlier.Items, "DefaultSource": def}
	return s.page(w, r, "questionnaire_send", v)
}

func (s *Server) uiNewVendorQuestionnaire(w http.ResponseWriter, r *http.Request, v *view) error {
	vd, err := s.app.GetVendor(r.Context(), id(r))
	if err != nil {
		return err
	}
	return s.sendForm(w, r, v, vd)
}

// sendFields maps the API's field names to the send form's.
var sendFields = map[string]string{"templateId": "source", "fromQuestionnaireId": "source", "questions": "source",
	"name": "name", "dueDate": "dueDate", "expiresInDays": "expiresInDays"}

// sendErrors shows the errors of create-and-send next to the form's fields;
// it returns false for errors that are not about the input.
func sendErrors(err error, v *view, r *http.Request) bool {
	var le *app.LimitError
	if errors.As(err, &le) {
		v.Errors = map[string]string{"form": "The " + le.Plan + " plan allows " + strconv.Itoa(le.Allowed) +
			" questionnaires a month, and that many were created this month. Send an existing one again, or move to a larger plan."}
		v.Form, v.Status = r.PostForm, http.StatusForbidden
		return true
	}
	if !formErrors(err, v, r) {
		return false
	}
	out := map[string]string{}
	for f, msg := range v.Errors {
		to, ok := sendFields[f]
		if !ok {
			to = "form"
		}
		if out[to] == "" {
			out[to] = msg
		}
	}
	v.Errors = out
	return true
}

// expiresInDays reads the link's lifetime; blank means the default.
func expiresInDays(f url.Values) (*int, bool) {
	raw := strings.TrimSpace(f.Get("expiresInDays"))
	if raw == "" {
		return nil, true
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return nil, false
	}
	return &n, true
}

// uiSendVendorQuestionnaire creates a questionnaire for the vendor and sends
// it, then answers with the questionnaire's page carrying the link: the
// token is shown this once and never put in a URL.
func (s *Server) uiSendVendorQuestionnaire(w http.ResponseWriter, r *http.Request, v *view) error {
	vd, err := s.app.GetVendor(r.Context(), id(r))
	if err != nil {
		return err
	}
	f := r.PostForm
	in := app.QuestionnaireCreate{Name: strings.TrimSpace(f.Get("name")), VendorID: app.Ptr(vd.ID), DueDate: nonEmpty(f.Get("dueDate"))}
	kind, ref, _ := strings.Cut(f.Get("source"), ":")
	switch {
	case kind == "template" && ref != "":
		in.TemplateID = &ref
	case kind == "questionnaire" && ref != "":
		in.FromQuestionnaireID = &ref
	default:
		v.Errors = map[string]string{"source": "Choose a template or an earlier questionnaire to send."}
	}
	days, ok := expiresInDays(f)
	if !ok {
		if v.Errors == nil {
			v.Errors = map[string]string{}
		}
		v.Errors["expiresInDays"] = "Enter a whole number of days, from 1 to 90."
	}
	if v.Errors != nil {
		v.Form, v.Status = f, http.StatusUnprocessableEntity
		return s.sendForm(w, r, v, vd)
	}
	sent, err := s.app.CreateAndSendQuestionnaire(r.Context(), in, app.QuestionnaireSend{ExpiresInDays: days})
	if err != nil {
		if !sendErrors(err, v, r) {
			return err
		}
		return s.sendForm(w, r, v, vd)
	}
	return s.showSent(w, r, v, sent, http.StatusCreated, "Questionnaire created and sent.")
}

// showSent renders the questionnaire's page with its new vendor link.
func (s *Server) showSent(w http.ResponseWriter, r *http.Request, v *view, sent *app.SentLink, status int, msg string) error {
	qn, err := s.app.GetQuestionnaire(r.Context(), sent.Questionnaire.ID)
	if err != nil {
		return err
	}
	v.Status, v.Flash = status, msg
	return s.questionnairePage(w, r, v, qn, nil, &sentView{URL: s.BaseURL(r) + sent.Path, ExpiresAt: sent.ExpiresAt})
}

// uiResendQuestionnaire issues a new link to the questionnaire's vendor;
// the earlier link stops working.
func (s *Server) uiResendQuestionnaire(w http.ResponseWriter, r *http.Request, v *view) error {
	days, ok := expiresInDays(r.PostForm)
	var err error
	if !ok {
		err = app.Invalid("expiresInDays", app.CodeInvalid, r.PostForm.Get("expiresInDays"), "Enter a whole number of days, from 1 to 90.")
	}
	var sent *app.SentLink
	if err == nil {
		sent, err = s.app.SendQuestionnaire(r.Context(), id(r), app.QuestionnaireSend{ExpiresInDays: days})
	}
	if err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		qn, gerr := s.app.GetQuestionnaire(r.Context(), id(r))
		if gerr != nil {
			return gerr
		}
		return s.questionnairePage(w, r, v, qn, nil, nil)
	}
	return s.showSent(w, r, v, sent, http.StatusOK, "A new link was issued; the earlier one no longer works.")
}

// uiDeleteQuestionnaire deletes a questionnaire once the box confirming it
// is ticked, and goes back to its vendor or to the list.
func (s *Server) uiDeleteQuestionnaire(w http.ResponseWriter, r *http.Request, v *view) error {
	qn, err := s.app.GetQuestionnaire(r.Context(), id(r))
	if err != nil {
		return err
	}
	if r.PostFormValue("confirm") != "on" {
		v.Errors = map[string]string{"confirm": "Tick this box to confirm that the questionnaire and its answers are to be deleted."}
		v.Form, v.Status = r.PostForm, http.StatusUnprocessableEntity
		return s.questionnairePage(w, r, v, qn, nil, nil)
	}
	if err := s.app.DeleteQuestionnaire(r.Context(), qn.ID); err != nil {
		return err
	}
	if qn.VendorID != nil {
		return redirect(w, r, "/vendors/"+url.PathEscape(*qn.VendorID)+"?done=questionnaire-deleted#questionnaires")
	}
	return redirect(w, r, "/questionnaires?done=deleted")
}
