package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Notifications tell people what the program needs from them. The notify
// job reads the event log past its own cursor (like webhook dispatch), and
// for each event of a kind people are told about records one notification
// per recipient; by each person's preference it is mailed at once, gathered
// into a daily digest, or only kept (the person's list on the notifications
// page). Without mail configured, notifications are kept and not queued.

// Notification kinds.
const (
	NotifyEvidenceExpiring   = "evidence_expiring"
	NotifyCorrectiveOverdue  = "corrective_action_overdue"
	NotifyPolicyPublished    = "policy_published"
	NotifyIncidentDeadline   = "incident_deadline"
	NotifyWebhookPaused      = "webhook_paused"
	NotifySyncLeavers        = "sync_leavers"
	NotifyTrainingAssigned   = "training_assigned"
	NotifyTrainingDue        = "training_due"
	NotifyTrainingCompleted  = "training_completed"
	NotifyDeviceNonCompliant = "device_noncompliant"
	NotifyTrustAccess        = "trust_access_requested"
	NotificationDeliveryMail = "immediate"
	NotificationDigest       = "digest"
	NotificationOff          = "off"
)

// NotificationKind describes one kind for people choosing how to get it.
type NotificationKind struct {
	Kind        string `json:"kind"`
	Label       string `json:"label"`
	Description string `json:"description"`
	Event       string `json:"event"`
	// Recipients names who gets it, for the settings page.
	Recipients string `json:"recipients"`
}

// NotificationKinds are the kinds people are told about, in page order.
var NotificationKinds = []NotificationKind{
	{NotifyEvidenceExpiring, "Evidence expiring", "Evidence enters the 30-day window before it expires.", EventEvidenceExpiring, "owners and admins"},
	{NotifyCorrectiveOverdue, "Corrective action overdue", "A corrective action passes its due date.", EventCorrectiveActionOverdue, "owners and admins"},
	{NotifyPolicyPublished, "Policy to acknowledge", "A policy is published and asks you to acknowledge it.", "policy.published", "everyone but auditors"},
	{NotifyIncidentDeadline, "Incident reporting deadline", "A statutory report of an incident is due soon or overdue.", EventIncidentDeadlineApproaching, "owners and admins"},
	{NotifyWebhookPaused, "Webhook paused", "A webhook endpoint failed for too long and was paused.", EventWebhookPaused, "owners and admins"},
	{NotifySyncLeavers, "Directory sync found leavers", "A directory sync deactivated people who left; their offboarding tasks are open.", EventSyncRunCompleted, "owners and admins"},
	{NotifyTrainingCompleted, "Training completed", "You completed a training module: the mail links your certificate and its public verification page.", EventTrainingCompleted, "the person who completed it"},
	{NotifyTrainingAssigned, "Training assigned", "A training module is assigned to you (or assigned again for its yearly renewal).", EventTrainingAssigned, "the person assigned"},
	{NotifyTrainingDue, "Training due or overdue", "Your training is due within 7 days, or its due date passed.", EventTrainingReminder + ", " + EventTrainingOverdue, "the person assigned"},
	{NotifyDeviceNonCompliant, "Device not compliant", "A device's last check-in failed a check or missed a required one.", EventDeviceComplianceChanged, "the device's person, owners and admins"},
	{NotifyTrustAccess, "Trust access requested", "A visitor of the trust portal asks for the NDA-gated documents; someone decides.", EventTrustAccessRequested, "owners and admins"},
}

// NotificationDeliveries are the choices a person has per kind.
var NotificationDeliveries = []string{NotificationDeliveryMail, NotificationDigest, NotificationOff}

func notificationKind(kind string) (NotificationKind, bool) {
	for _, k := range NotificationKinds {
		if k.Kind == kind {
			return k, true
		}
	}
	return NotificationKind{}, false
}

// Notification is one thing one person was told.
type Notification struct {
	ID             string    `json:"id"`
	OrganizationID string    `json:"-"`
	PersonID       string    `json:"personId"`
	Kind           string    `json:"kind"`
	EventID        string    `json:"eventId"`
	Subject        string    `json:"subject"`
	Body           string    `json:"body"`
	Link           string    `json:"link"`
	Delivery       string    `json:"delivery"` // immediate, digest or off, as chosen when it was recorded
	Mailed         bool      `json:"mailed"`
	CreatedAt      time.Time `json:"createdAt"`
	mailTo         string
}

// NotificationStore persists notifications, preferences and the cursor.
type NotificationStore interface {
	NotifyCursor(ctx context.Context) (int64, error)
	SetNotifyCursor(ctx context.Context, seq int64) error
	// InsertNotification records n unless the person already has one for
	// the event; it reports whether it was inserted.
	InsertNotification(ctx context.Context, n *Notification, mailID string) (bool, error)
	NotificationPreferences(ctx context.Context, orgID, personID string) (map[string]string, error)
	SetNotificationPreferences(ctx context.Context, orgID, personID string, prefs map[string]string) error
	ListNotifications(ctx context.Context, orgID, personID string, limit int) ([]Notification, error)
	// PendingDigests returns the unmailed digest notifications, oldest
	// first, up to limit.
	PendingDigests(ctx context.Context, limit int) ([]Notification, error)
	MarkNotificationsMailed(ctx context.Context, ids []string, mailID string) error
}

const notifyBatch = 200

// Notify turns the events past the notify cursor into notifications and
// queues the mail of those wanted at once, moving the cursor in the same
// transaction. It returns the notifications recorded.
func (a *App) Notify(ctx context.Context) (int, error) {
	total := 0
	for {
		n, more, err := a.notifyBatch(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

func (a *App) notifyBatch(ctx context.Context) (int, bool, error) {
	n, more := 0, false
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		cur, err := a.store.NotifyCursor(ctx)
		if err != nil {
			return err
		}
		evs, err := a.store.EventsAfter(ctx, cur, notifyBatch)
		if err != nil || len(evs) == 0 {
			return err
		}
		more = len(evs) == notifyBatch
		for _, e := range evs {
			k := a.notificationsFor(ctx, e)
			for _, nt := range k {
				ok, err := a.recordNotification(ctx, nt)
				if err != nil {
					return err
				}
				if ok {
					n++
				}
			}
		}
		return a.store.SetNotifyCursor(ctx, evs[len(evs)-1].Seq)
	})
	if err != nil {
		return 0, false, fmt.Errorf("notify: %w", err)
	}
	return n, more, nil
}

// recordNotification stores one notification and, when the person wants
// it at once and mail is configured, queues its mail in the same
// transaction. An event already recorded for the person (the cursor moved
// back after a restore) records and mails nothing.
func (a *App) recordNotification(ctx context.Context, n *Notification) (bool, error) {
	prefs, err := a.store.NotificationPreferences(ctx, n.OrganizationID, n.PersonID)
	if err != nil {
		return false, err
	}
	n.Delivery = prefs[n.Kind]
	if n.Delivery == "" {
		n.Delivery = NotificationDeliveryMail
	}
	n.ID, n.CreatedAt = NewID(PrefixNotification), a.Now()
	ok, err := a.store.InsertNotification(ctx, n, "")
	if err != nil || !ok {
		return false, err
	}
	if n.Delivery != NotificationDeliveryMail || a.activeMailer() == nil {
		return true, nil
	}
	q, err := a.QueueMail(ctx, n.OrganizationID, "notification."+n.Kind, MailMessage{To: n.mailTo, Subject: n.Subject,
		Text: n.Body + "\n\n" + a.absoluteLink(n.Link) + "\n\n" + notificationFooter + "\n",
		HTML: notificationHTML(n.Subject, []notificationItem{{n.Subject, n.Body, a.absoluteLink(n.Link)}})})
	if err != nil {
		// An address the mail system refuses must not hold up the
		// notifications behind it: the notification stays on the page.
		a.log.Warn("notification not mailed", "kind", n.Kind, "person", n.PersonID, "error", err)
		return true, nil
	}
	n.Mailed = true
	return true, a.store.MarkNotificationsMailed(ctx, []string{n.ID}, q.ID)
}

const notificationFooter = "You receive this because of your notification settings in the compliance appliance (Notifications page)."

// absoluteLink makes a page path absolute when the public URL is known.
func (a *App) absoluteLink(path string) string {
	if base := strings.TrimRight(a.config.PublicURL, "/"); base != "" && strings.HasPrefix(path, "/") {
		return base + path
	}
	return path
}

// notificationsFor decides who is told about one event, and what.
func (a *App) notificationsFor(ctx context.Context, e StoredEvent) []*Notification {
	var d map[string]any
	if json.Unmarshal(e.Payload, &d) != nil {
		return nil
	}
	str := func(k string) string { s, _ := d[k].(string); return s }
	var kind, subject, body, link string
	var direct []string // people told by id, before the roles
	roles := []Role{RoleOwner, RoleAdmin}
	switch e.Type {
	case EventEvidenceExpiring:
		kind, link = NotifyEvidenceExpiring, "/controls/"+str("controlId")
		subject = "Evidence expires on " + dateOf(str("expiresAt"))
		body = fmt.Sprintf("Evidence %s of control %s expires on %s. Upload a renewal before then so the control stays implemented.",
			str("evidenceId"), str("controlId"), dateOf(str("expiresAt")))
	case EventCorrectiveActionOverdue:
		kind, link = NotifyCorrectiveOverdue, "/findings/"+str("findingId")
		subject = "Corrective action overdue since " + str("dueDate")
		body = fmt.Sprintf("Corrective action %s of finding %s was due on %s and is not closed.", str("correctiveActionId"), str("findingId"), str("dueDate"))
	case "policy.published":
		pol, _ := d["policy"].(map[string]any)
		if sign, _ := pol["isRequiredToSign"].(bool); !sign {
			return nil // nothing to acknowledge
		}
		id, _ := pol["id"].(string)
		name, _ := pol["name"].(string)
		kind, link = NotifyPolicyPublished, "/policies/"+id
		subject = "Please acknowledge the policy " + name
		body = fmt.Sprintf("The policy %q was published. Read it and acknowledge it in the compliance appliance.", name)
		roles = []Role{RoleOwner, RoleAdmin, RoleEmployee, RoleContractor}
	case EventIncidentDeadlineApproaching:
		kind, link = NotifyIncidentDeadline, "/incidents/"+str("incidentId")
		what := "is due"
		if over, _ := d["overdue"].(bool); over {
			what = "was due"
		}
		subject = fmt.Sprintf("%s %s %s", strings.ToUpper(str("regime")), str("title"), what+" "+dateTimeOf(str("dueAt")))
		body = fmt.Sprintf("The %s report %q of incident %s %s %s (UTC).", strings.ToUpper(str("regime")), str("title"), str("incidentId"), what, dateTimeOf(str("dueAt")))
	case EventWebhookPaused:
		kind, link = NotifyWebhookPaused, "/webhooks/"+str("webhookId")
		subject = "Webhook paused: " + str("url")
		body = fmt.Sprintf("The webhook to %s failed every attempt since %s and was paused. Last error: %s. Fix the receiver and resume it.",
			str("url"), dateTimeOf(str("failingSince")), str("lastError"))
	case EventSyncRunCompleted:
		n, _ := d["deactivated"].(float64)
		if dry, _ := d["dryRun"].(bool); dry || n == 0 {
			return nil // told only of leavers really deactivated
		}
		kind, link = NotifySyncLeavers, "/integrations/sync/runs/"+str("syncRunId")
		subject = fmt.Sprintf("Directory sync deactivated %d leaver(s)", int(n))
		body = fmt.Sprintf("The sync of directory connection %s deactivated %d person(s) who left the directory. Their offboarding tasks (revoke access, collect devices) are open.",
			str("connectionId"), int(n))
	case EventTrainingAssigned, EventTrainingReminder, EventTrainingOverdue:
		title := str("moduleTitle")
		if title == "" {
			title = str("moduleId")
		}
		due := "no due date"
		if d := str("dueDate"); d != "" {
			due = "due " + d
		}
		kind, link, roles, direct = NotifyTrainingAssigned, "/training", nil, []string{str("personId")}
		switch e.Type {
		case EventTrainingAssigned:
			subject = "Training assigned: " + title
			body = fmt.Sprintf("The training %q is assigned to you (%s). Complete it on the Training page of the compliance appliance.", title, due)
		case EventTrainingReminder:
			kind, subject = NotifyTrainingDue, "Training due soon: "+title
			body = fmt.Sprintf("The training %q assigned to you is %s. Complete it before then.", title, due)
		default:
			kind, subject = NotifyTrainingDue, "Training overdue: "+title
			body = fmt.Sprintf("The training %q assigned to you was %s and is not completed yet.", title, due)
		}
	case EventTrainingCompleted:
		title := str("moduleTitle")
		kind, link, roles, direct = NotifyTrainingCompleted, "/training/completions/"+str("id")+"/certificate", nil, []string{str("personId")}
		subject = "Training completed: " + title
		body = fmt.Sprintf("You completed the training %q (version %v) on %s. Your certificate is linked below; anyone you show it to can check it on the appliance's verification page, /verify/training/%s.",
			title, d["moduleVersion"], dateTimeOf(str("completedAt")), str("verificationCode"))
	case EventDeviceComplianceChanged:
		if ok, _ := d["isCompliant"].(bool); ok {
			return nil
		}
		var failed []string
		if fs, ok := d["failedChecks"].([]any); ok {
			for _, f := range fs {
				if s, ok := f.(string); ok {
					failed = append(failed, s)
				}
			}
		}
		kind, link = NotifyDeviceNonCompliant, "/devices/"+str("deviceId")
		name := str("deviceId")
		if dev, err := a.store.GetDevice(ctx, e.OrganizationID, str("deviceId")); err == nil {
			name = dev.Name
		}
		subject = "Device not compliant: " + name
		body = fmt.Sprintf("The device %s is not compliant since its check-in at %s. Failed or missing checks: %s.", name,
			dateTimeOf(str("changedAt")), strings.Join(failed, ", "))
		if pid := str("personId"); pid != "" {
			direct = []string{pid}
		}
	case EventTrustAccessRequested:
		who := str("name")
		if c := str("company"); c != "" {
			who += " (" + c + ")"
		}
		reason := str("reason")
		if reason == "" {
			reason = "none given"
		}
		kind, link = NotifyTrustAccess, "/trust-requests"
		// The visitor typed these: one line, bounded, for the subject.
		subject = clipRunes(strings.Join(strings.Fields("Trust access requested by "+who), " "), 200)
		body = fmt.Sprintf("%s <%s> asked on %s for access to the NDA-gated documents of your trust portal. Reason: %s. Review the request (%s) and approve or deny it.",
			who, str("email"), dateTimeOf(str("requestedAt")), reason, str("requestId"))
	default:
		return nil
	}
	var out []*Notification
	seen := map[string]bool{}
	for _, id := range direct {
		p, err := a.store.GetPerson(ctx, e.OrganizationID, id)
		if err != nil || !p.IsActive || seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		out = append(out, &Notification{OrganizationID: e.OrganizationID, PersonID: p.ID, Kind: kind, EventID: e.ID,
			Subject: subject, Body: body, Link: link, mailTo: p.Email})
	}
	for _, r := range roles {
		l, err := a.store.ListPeople(ctx, e.OrganizationID, PersonFilter{Role: string(r), Page: Page{Page: 1, PerPage: 10000}})
		if err != nil {
			a.log.Warn("notification recipients", "event", e.ID, "error", err)
			continue
		}
		for _, p := range l.Items {
			if !p.IsActive || seen[p.ID] {
				continue
			}
			seen[p.ID] = true
			out = append(out, &Notification{OrganizationID: e.OrganizationID, PersonID: p.ID, Kind: kind, EventID: e.ID,
				Subject: subject, Body: body, Link: link, mailTo: p.Email})
		}
	}
	return out
}

func dateOf(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format("2006-01-02")
	}
	return s
}

func dateTimeOf(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return s
}

const digestBatch = 2000

// SendDigests mails each person one message with their unmailed digest
// notifications (the daily digest job). It returns the messages queued.
func (a *App) SendDigests(ctx context.Context) (int, error) {
	if a.activeMailer() == nil {
		return 0, nil
	}
	pending, err := a.store.PendingDigests(ctx, digestBatch)
	if err != nil || len(pending) == 0 {
		return 0, err
	}
	type key struct{ org, person string }
	groups := map[key][]Notification{}
	var order []key
	for _, n := range pending {
		k := key{n.OrganizationID, n.PersonID}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].org+order[i].person < order[j].org+order[j].person })
	sent := 0
	for _, k := range order {
		ns := groups[k]
		err := a.store.InTx(ctx, func(ctx context.Context) error {
			p, err := a.store.GetPerson(ctx, k.org, k.person)
			if err != nil {
				return err
			}
			ids := make([]string, len(ns))
			var b strings.Builder
			fmt.Fprintf(&b, "Your daily summary from the compliance appliance: %d item(s).\n\n", len(ns))
			items := make([]notificationItem, len(ns))
			for i, n := range ns {
				ids[i] = n.ID
				fmt.Fprintf(&b, "- %s\n  %s\n  %s\n\n", n.Subject, n.Body, a.absoluteLink(n.Link))
				items[i] = notificationItem{n.Subject, n.Body, a.absoluteLink(n.Link)}
			}
			b.WriteString(notificationFooter + "\n")
			if !p.IsActive {
				return a.store.MarkNotificationsMailed(ctx, ids, "")
			}
			q, err := a.QueueMail(ctx, k.org, "notification.digest", MailMessage{To: p.Email,
				Subject: fmt.Sprintf("Compliance: %d item(s) need your attention", len(ns)), Text: b.String(),
				HTML: notificationHTML(fmt.Sprintf("Your daily summary: %d item(s)", len(ns)), items)})
			if err != nil {
				return err
			}
			sent++
			return a.store.MarkNotificationsMailed(ctx, ids, q.ID)
		})
		if err != nil {
			return sent, fmt.Errorf("digest for %s: %w", k.person, err)
		}
	}
	return sent, nil
}

// NotificationSettings is what the notifications page and
// GET /v1/me/notification-preferences show.
type NotificationSettings struct {
	MailConfigured bool               `json:"mailConfigured"`
	Kinds          []NotificationKind `json:"kinds"`
	Preferences    map[string]string  `json:"preferences"`
	Recent         []Notification     `json:"recent"`
	Deliveries     []string           `json:"deliveries"`
}

// MyNotificationSettings returns the caller's preferences (every kind,
// defaults filled in) and their latest notifications.
func (a *App) MyNotificationSettings(ctx context.Context) (*NotificationSettings, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.UserID == "" {
		return nil, Errorf(ErrForbidden, "notification preferences belong to a person: sign in or use a key of a person")
	}
	prefs, err := a.store.NotificationPreferences(ctx, p.OrgID, p.UserID)
	if err != nil {
		return nil, err
	}
	out := &NotificationSettings{MailConfigured: a.activeMailer() != nil, Kinds: NotificationKinds, Preferences: map[string]string{},
		Deliveries: NotificationDeliveries}
	for _, k := range NotificationKinds {
		out.Preferences[k.Kind] = NotificationDeliveryMail
		if d := prefs[k.Kind]; d != "" {
			out.Preferences[k.Kind] = d
		}
	}
	if out.Recent, err = a.store.ListNotifications(ctx, p.OrgID, p.UserID, 50); err != nil {
		return nil, err
	}
	return out, nil
}

// SetMyNotificationPreferences changes the caller's delivery per kind;
// kinds not named keep theirs.
func (a *App) SetMyNotificationPreferences(ctx context.Context, prefs map[string]string) (*NotificationSettings, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.UserID == "" {
		return nil, Errorf(ErrForbidden, "notification preferences belong to a person: sign in or use a key of a person")
	}
	v := NewValidationError()
	if len(prefs) == 0 {
		v.Add("preferences", CodeRequired, nil, "preferences is required: an object of kind to "+strings.Join(NotificationDeliveries, ", "))
	}
	for k, d := range prefs {
		if _, ok := notificationKind(k); !ok {
			v.Add("preferences."+k, CodeInvalidEnum, k, "unknown notification kind")
			continue
		}
		oneOf(v, "preferences."+k, d, NotificationDeliveries)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.NotificationPreferences(ctx, p.OrgID, p.UserID)
		if err != nil {
			return err
		}
		if err := a.store.SetNotificationPreferences(ctx, p.OrgID, p.UserID, prefs); err != nil {
			return err
		}
		after := map[string]string{}
		for k, d := range before {
			after[k] = d
		}
		for k, d := range prefs {
			after[k] = d
		}
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "notification_preferences", ResourceID: p.UserID, Before: before, After: after})
	})
	if err != nil {
		return nil, fmt.Errorf("set notification preferences: %w", err)
	}
	return a.MyNotificationSettings(ctx)
}
