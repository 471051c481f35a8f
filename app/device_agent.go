package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Device check types the agent reports. The first four are the reference's;
// os_updates and firewall are ours.
const (
	CheckDiskEncryption = "disk_encryption"
	CheckAntivirus      = "antivirus"
	CheckPasswordPolicy = "password_policy"
	CheckScreenLock     = "screen_lock"
	CheckOSUpdates      = "os_updates"
	CheckFirewall       = "firewall"
)

// DeviceCheckTypes lists every check type in display order.
var DeviceCheckTypes = []string{CheckDiskEncryption, CheckScreenLock, CheckAntivirus, CheckPasswordPolicy, CheckOSUpdates, CheckFirewall}

// RequiredDeviceChecks must all be reported, and passed, at a device's last
// check-in for the device to be compliant.
var RequiredDeviceChecks = []string{CheckDiskEncryption, CheckScreenLock, CheckAntivirus, CheckPasswordPolicy}

// Device agent events.
const (
	EventDeviceComplianceChanged = "device.compliance.changed"
)

// Device agent limits and timing.
const (
	maxCheckMethod      = 100
	maxCheckRaw         = 2000
	maxCheckMessage     = 1000
	maxCheckException   = 500
	maxChecksPerCheckIn = 50
	// checkInClockSkew is how far in the future a checkedAt may be.
	checkInClockSkew = 5 * time.Minute
	// DeviceCheckInInterval is the interval the server asks agents to keep.
	DeviceCheckInInterval = time.Hour
	// DeviceStaleAfter is how long without a check-in makes a device stale.
	DeviceStaleAfter   = 7 * 24 * time.Hour
	deviceHistoryLimit = 100
	// AuthDeviceAgent is the auth type of a request made with a device token.
	AuthDeviceAgent = "device-agent"
	// Token prefixes: enrolment tokens and per-device agent tokens.
	EnrolmentTokenPrefix   = "cen_"
	DeviceAgentTokenPrefix = "cdt_"
)

// DeviceCheckDetails is what a check saw: how it checked, the raw output
// and a human message.
type DeviceCheckDetails struct {
	Method    string  `json:"method"`
	Raw       string  `json:"raw"`
	Message   string  `json:"message"`
	Exception *string `json:"exception"`
}

// DeviceCheck is one reported check result.
type DeviceCheck struct {
	ID         string             `json:"id"`
	DeviceID   string             `json:"deviceId"`
	CheckType  string             `json:"checkType"`
	Passed     bool               `json:"passed"`
	Details    DeviceCheckDetails `json:"details"`
	CheckedAt  time.Time          `json:"checkedAt"`
	ReceivedAt time.Time          `json:"receivedAt"`
}

// DeviceDetail is a device with the latest result of every check and the
// recent history of results.
type DeviceDetail struct {
	Device
	Stale   bool          `json:"stale"`
	Checks  []DeviceCheck `json:"checks"`
	History []DeviceCheck `json:"history"`
}

// DeviceCheckInput is one check of a check-in body.
type DeviceCheckInput struct {
	CheckType string                   `json:"checkType"`
	Passed    *bool                    `json:"passed"`
	Details   *DeviceCheckDetailsInput `json:"details"`
	CheckedAt string                   `json:"checkedAt"`
}

// DeviceCheckDetailsInput is the details object of a check-in check.
type DeviceCheckDetailsInput struct {
	Method    *string `json:"method"`
	Raw       *string `json:"raw"`
	Message   *string `json:"message"`
	Exception *string `json:"exception"`
}

// DeviceCheckIn is the body of POST /v1/device-agent/check-in.
type DeviceCheckIn struct {
	DeviceID     string             `json:"deviceId"`
	Checks       []DeviceCheckInput `json:"checks"`
	AgentVersion *string            `json:"agentVersion"`
}

// DeviceCheckInResult answers a check-in.
type DeviceCheckInResult struct {
	DeviceID    string    `json:"deviceId"`
	IsCompliant bool      `json:"isCompliant"`
	FailedCheck []string  `json:"failedChecks"`
	NextCheckIn time.Time `json:"nextCheckIn"`
}

// DeviceComplianceChangedEventData is the data of device.compliance.changed.
type DeviceComplianceChangedEventData struct {
	DeviceID            string    `json:"deviceId"`
	PersonID            *string   `json:"personId"`
	PreviousIsCompliant bool      `json:"previousIsCompliant"`
	IsCompliant         bool      `json:"isCompliant"`
	FailedChecks        []string  `json:"failedChecks"`
	ChangedAt           time.Time `json:"changedAt"`
}

// DeviceRegister is the body of POST /v1/device-agent/register.
type DeviceRegister struct {
	Name           string  `json:"name"`
	Hostname       string  `json:"hostname"`
	Platform       string  `json:"platform"`
	OSVersion      string  `json:"osVersion"`
	SerialNumber   *string `json:"serialNumber"`
	HardwareModel  *string `json:"hardwareModel"`
	AgentVersion   *string `json:"agentVersion"`
	OrganizationID string  `json:"organizationId"`
}

// DeviceRegistration answers a registration: the device and the agent's
// token for it, shown once.
type DeviceRegistration struct {
	DeviceID       string    `json:"deviceId"`
	OrganizationID string    `json:"organizationId"`
	DeviceToken    string    `json:"deviceToken"`
	NextCheckIn    time.Time `json:"nextCheckIn"`
}

// DeviceAgentToken is the stored form of an agent's per-device token.
type DeviceAgentToken struct {
	ID             string
	OrganizationID string
	DeviceID       string
	Hash           string
	CreatedAt      time.Time
	LastUsedAt     *time.Time
	RevokedAt      *time.Time
}

// EnrolmentToken lets an unattended install register devices.
type EnrolmentToken struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Prefix    string     `json:"prefix"`
	MaxUses   *int       `json:"maxUses"`
	Uses      int        `json:"uses"`
	PersonID  *string    `json:"personId"`
	ExpiresAt time.Time  `json:"expiresAt"`
	CreatedBy *string    `json:"createdById"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt"`
	// Token is the plaintext, present only in the creation response.
	Token string `json:"token,omitempty"`

	OrganizationID string `json:"-"`
	Hash           string `json:"-"`
}

// EnrolmentTokenCreate is the body of POST /v1/device-agent/enrolment-tokens.
type EnrolmentTokenCreate struct {
	Name      string  `json:"name"`
	MaxUses   *int    `json:"maxUses"`
	PersonID  *string `json:"personId"`
	ExpiresIn string  `json:"expiresIn"`
}

// DeviceCheckInWrite is what one check-in stores.
type DeviceCheckInWrite struct {
	DeviceID            string
	Checks              []DeviceCheck
	IsCompliant         bool
	ComplianceChangedAt *time.Time
	AgentVersion        *string
	At                  time.Time
}

// DeviceAgentStore persists check results and agent credentials.
type DeviceAgentStore interface {
	DeleteDevice(ctx context.Context, orgID, id string) error
	FindDeviceBySerial(ctx context.Context, orgID, serial string) (*Device, error)
	UpdateDeviceRegistration(ctx context.Context, orgID string, d *Device) error
	SaveDeviceCheckIn(ctx context.Context, orgID string, w DeviceCheckInWrite) error
	LatestDeviceChecks(ctx context.Context, orgID, deviceID string) ([]DeviceCheck, error)
	DeviceCheckHistory(ctx context.Context, orgID, deviceID string, limit int) ([]DeviceCheck, error)
	CreateDeviceAgentToken(ctx context.Context, t *DeviceAgentToken) error
	DeviceAgentTokenByHash(ctx context.Context, hash string) (*DeviceAgentToken, error)
	TouchDeviceAgentToken(ctx context.Context, orgID, id string, at time.Time) error
	RevokeDeviceAgentTokens(ctx context.Context, orgID, deviceID string, at time.Time) (int, error)
	CreateEnrolmentToken(ctx context.Context, t *EnrolmentToken) error
	ListEnrolmentTokens(ctx context.Context, orgID string) ([]EnrolmentToken, error)
	EnrolmentTokenByHash(ctx context.Context, hash string) (*EnrolmentToken, error)
	UseEnrolmentToken(ctx context.Context, orgID, id string) error
	RevokeEnrolmentToken(ctx context.Context, orgID, id string, at time.Time) error
}

// hashToken is the stored form of an agent or enrolment token.
func hashToken(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// GetDeviceDetail returns a device with its latest checks and history.
func (a *App) GetDeviceDetail(ctx context.Context, id string) (*DeviceDetail, error) {
	d, err := a.GetDevice(ctx, id)
	if err != nil {
		return nil, err
	}
	p, _ := principal(ctx)
	return a.deviceDetail(ctx, p.OrgID, d)
}

func (a *App) deviceDetail(ctx context.Context, orgID string, d *Device) (*DeviceDetail, error) {
	latest, err := a.store.LatestDeviceChecks(ctx, orgID, d.ID)
	if err != nil {
		return nil, fmt.Errorf("device %s checks: %w", d.ID, err)
	}
	hist, err := a.store.DeviceCheckHistory(ctx, orgID, d.ID, deviceHistoryLimit)
	if err != nil {
		return nil, fmt.Errorf("device %s history: %w", d.ID, err)
	}
	return &DeviceDetail{Device: *d, Stale: a.deviceStale(d), Checks: latest, History: hist}, nil
}

func (a *App) deviceStale(d *Device) bool {
	return d.LastCheckIn == nil || d.LastCheckIn.Before(a.Now().Add(-DeviceStaleAfter))
}

// ListMemberDevices lists the devices of one person of the organization.
func (a *App) ListMemberDevices(ctx context.Context, personID string, pg Page) (List[Device], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Device]{}, err
	}
	if p.SeesOnlyAssigned() && personID != p.UserID {
		return List[Device]{}, ErrNotFound
	}
	if _, err := a.store.GetPerson(ctx, p.OrgID, personID); err != nil {
		return List[Device]{}, err
	}
	return a.ListDevices(ctx, DeviceFilter{PersonID: personID, Page: pg})
}

// DeleteDevice removes a device and its check history. Its agent's token
// then gets 404 for the device.
func (a *App) DeleteDevice(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		d, err := a.store.GetDevice(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if err := a.store.DeleteDevice(ctx, p.OrgID, id); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "deleted", ResourceType: "device", ResourceID: id, Before: d})
	})
	if err != nil {
		return fmt.Errorf("delete device %s: %w", id, err)
	}
	return nil
}

// RevokeDeviceAgent revokes every agent token of a device; the agent's next
// call is 401 until the device is enrolled again.
func (a *App) RevokeDeviceAgent(ctx context.Context, deviceID string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.store.GetDevice(ctx, p.OrgID, deviceID); err != nil {
			return err
		}
		n, err := a.store.RevokeDeviceAgentTokens(ctx, p.OrgID, deviceID, a.Now())
		if err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "agent_revoked", ResourceType: "device", ResourceID: deviceID,
			After: map[string]any{"revokedTokens": n}})
	})
	if err != nil {
		return fmt.Errorf("revoke agent of device %s: %w", deviceID, err)
	}
	return nil
}

// CreateEnrolmentToken creates an enrolment token and returns it with its
// plaintext, shown once.
func (a *App) CreateEnrolmentToken(ctx context.Context, in EnrolmentTokenCreate) (*EnrolmentToken, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	v := NewValidationError()
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		v.Add("name", CodeRequired, nil, "name is required")
	}
	maxLen(v, "name", in.Name, 200)
	if in.MaxUses != nil && (*in.MaxUses < 1 || *in.MaxUses > 100000) {
		v.Add("maxUses", CodeInvalid, *in.MaxUses, "maxUses must be between 1 and 100000 (omit it for no limit)")
	}
	life := 7 * 24 * time.Hour
	if in.ExpiresIn != "" {
		d, err := ParseLifetime(in.ExpiresIn)
		if err != nil || d <= 0 || d > 365*24*time.Hour {
			v.Add("expiresIn", CodeInvalid, in.ExpiresIn, "expiresIn must be a positive duration of at most 365d, such as 24h or 30d")
		}
		life = d
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	now := a.Now()
	plain := EnrolmentTokenPrefix + RandomToken(32)
	t := &EnrolmentToken{ID: NewID(PrefixEnrolmentToken), OrganizationID: p.OrgID, Name: in.Name, Prefix: plain[:12],
		MaxUses: in.MaxUses, PersonID: in.PersonID, ExpiresAt: now.Add(life), CreatedAt: now, Hash: hashToken(plain)}
	if p.UserID != "" {
		t.CreatedBy = Ptr(p.UserID)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if in.PersonID != nil {
			if _, err := a.store.GetPerson(ctx, p.OrgID, *in.PersonID); errors.Is(err, ErrNotFound) {
				return Invalid("personId", CodeUnknownReference, *in.PersonID, "personId must be a person of this organization")
			} else if err != nil {
				return err
			}
		}
		if err := a.store.CreateEnrolmentToken(ctx, t); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "enrolment_token", ResourceID: t.ID, After: t})
	})
	if err != nil {
		return nil, fmt.Errorf("create enrolment token: %w", err)
	}
	t.Token = plain
	return t, nil
}

// ListEnrolmentTokens lists the organization's enrolment tokens.
func (a *App) ListEnrolmentTokens(ctx context.Context) ([]EnrolmentToken, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	return a.store.ListEnrolmentTokens(ctx, p.OrgID)
}

// RevokeEnrolmentToken revokes an enrolment token; devices it enrolled keep
// their own tokens.
func (a *App) RevokeEnrolmentToken(ctx context.Context, id string) error {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.RevokeEnrolmentToken(ctx, p.OrgID, id, a.Now()); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "revoked", ResourceType: "enrolment_token", ResourceID: id})
	})
	if err != nil {
		return fmt.Errorf("revoke enrolment token %s: %w", id, err)
	}
	return nil
}

// agentPrincipal is the principal a device's own requests act as.
func agentPrincipal(orgID string, d *Device) *Principal {
	p := &Principal{OrgID: orgID, Role: RoleEmployee, AuthType: AuthDeviceAgent}
	if d != nil && d.PersonID != nil {
		p.UserID = *d.PersonID
	}
	return p
}

// RegisterDevice registers a device for the agent and returns the device's
// agent token. The caller is either an enrolment token (enrolToken, for
// unattended installs) or a signed-in person (the principal in ctx), whose
// device it becomes. A device with the serial number of a known device of
// the organization is that device enrolled again: its old tokens are revoked.
func (a *App) RegisterDevice(ctx context.Context, enrolToken string, in DeviceRegister) (*DeviceRegistration, error) {
	var orgID string
	var personID *string
	var enrol *EnrolmentToken
	now := a.Now()
	if enrolToken != "" {
		t, err := a.store.EnrolmentTokenByHash(ctx, hashToken(enrolToken))
		if errors.Is(err, ErrNotFound) {
			return nil, ErrUnauthenticated
		}
		if err != nil {
			return nil, err
		}
		if t.RevokedAt != nil || !now.Before(t.ExpiresAt) || (t.MaxUses != nil && t.Uses >= *t.MaxUses) {
			return nil, ErrUnauthenticated
		}
		enrol, orgID, personID = t, t.OrganizationID, t.PersonID
	} else {
		p, err := authorize(ctx, CapSelfService)
		if err != nil {
			return nil, err
		}
		if p.AuthType == AuthDeviceAgent {
			return nil, ErrForbidden
		}
		orgID = p.OrgID
		if p.UserID != "" {
			personID = Ptr(p.UserID)
		}
	}
	v := NewValidationError()
	in.Name, in.Hostname, in.OSVersion = strings.TrimSpace(in.Name), strings.TrimSpace(in.Hostname), strings.TrimSpace(in.OSVersion)
	for _, f := range []struct{ name, val string }{{"name", in.Name}, {"hostname", in.Hostname}, {"platform", in.Platform}, {"osVersion", in.OSVersion}} {
		if f.val == "" {
			v.Add(f.name, CodeRequired, nil, f.name+" is required")
		}
	}
	oneOf(v, "platform", in.Platform, devicePlatforms)
	maxLen(v, "name", in.Name, 200)
	maxLen(v, "hostname", in.Hostname, 255)
	maxLen(v, "osVersion", in.OSVersion, 200)
	for f, p := range map[string]*string{"serialNumber": in.SerialNumber, "hardwareModel": in.HardwareModel, "agentVersion": in.AgentVersion} {
		if p != nil {
			maxLen(v, f, *p, 200)
		}
	}
	if in.OrganizationID != "" && in.OrganizationID != orgID {
		v.Add("organizationId", CodeInvalid, in.OrganizationID, "organizationId must be the organization of the credential")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	plain := DeviceAgentTokenPrefix + RandomToken(32)
	out := &DeviceRegistration{OrganizationID: orgID, DeviceToken: plain, NextCheckIn: now}
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		var dev *Device
		if in.SerialNumber != nil && *in.SerialNumber != "" {
			d, err := a.store.FindDeviceBySerial(ctx, orgID, *in.SerialNumber)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			dev = d
		}
		action := "registered"
		osv := in.OSVersion
		if dev != nil {
			action = "re-registered"
			dev.Name, dev.Hostname, dev.Platform, dev.OSVersion = in.Name, in.Hostname, in.Platform, &osv
			dev.HardwareModel, dev.AgentVersion, dev.UpdatedAt = in.HardwareModel, in.AgentVersion, now
			if dev.PersonID == nil {
				dev.PersonID = personID
			}
			if err := a.store.UpdateDeviceRegistration(ctx, orgID, dev); err != nil {
				return err
			}
			if _, err := a.store.RevokeDeviceAgentTokens(ctx, orgID, dev.ID, now); err != nil {
				return err
			}
		} else {
			dev = &Device{ID: NewID(PrefixDevice), Name: in.Name, Hostname: in.Hostname, Platform: in.Platform, OSVersion: &osv,
				SerialNumber: in.SerialNumber, HardwareModel: in.HardwareModel, AgentVersion: in.AgentVersion, PersonID: personID,
				CreatedAt: now, UpdatedAt: now, Source: DeviceSourceAgent}
			if err := a.store.CreateDevice(ctx, orgID, dev); err != nil {
				return err
			}
		}
		if enrol != nil {
			if err := a.store.UseEnrolmentToken(ctx, orgID, enrol.ID); err != nil {
				if errors.Is(err, ErrNotFound) {
					return ErrUnauthenticated
				}
				return err
			}
		}
		if err := a.store.CreateDeviceAgentToken(ctx, &DeviceAgentToken{ID: NewID(PrefixDeviceToken), OrganizationID: orgID,
			DeviceID: dev.ID, Hash: hashToken(plain), CreatedAt: now}); err != nil {
			return err
		}
		out.DeviceID = dev.ID
		rctx := ctx
		if enrol != nil || PrincipalFrom(ctx) == nil {
			rctx = WithPrincipal(ctx, agentPrincipal(orgID, dev))
		}
		return a.record(rctx, Mutation{Action: action, ResourceType: "device", ResourceID: dev.ID, After: dev})
	})
	if err != nil {
		return nil, fmt.Errorf("register device: %w", err)
	}
	return out, nil
}

// DeviceAgentIdentity is who a device token belongs to.
type DeviceAgentIdentity struct {
	OrganizationID string
	DeviceID       string
	TokenID        string
}

// AuthenticateDeviceToken resolves an agent token; an unknown or revoked
// token is ErrUnauthenticated.
func (a *App) AuthenticateDeviceToken(ctx context.Context, plain string) (*DeviceAgentIdentity, error) {
	if !strings.HasPrefix(plain, DeviceAgentTokenPrefix) {
		return nil, ErrUnauthenticated
	}
	t, err := a.store.DeviceAgentTokenByHash(ctx, hashToken(plain))
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	if t.RevokedAt != nil {
		return nil, ErrUnauthenticated
	}
	return &DeviceAgentIdentity{OrganizationID: t.OrganizationID, DeviceID: t.DeviceID, TokenID: t.ID}, nil
}

// validateCheckIn checks every field of a check-in, naming each failing one
// by its path in the body (checks[2].details.raw).
func (a *App) validateCheckIn(in DeviceCheckIn, now time.Time) ([]DeviceCheck, error) {
	v := NewValidationError()
	if strings.TrimSpace(in.DeviceID) == "" {
		v.Add("deviceId", CodeRequired, nil, "deviceId is required")
	}
	if in.AgentVersion != nil {
		maxLen(v, "agentVersion", *in.AgentVersion, 100)
	}
	switch {
	case in.Checks == nil:
		v.Add("checks", CodeRequired, nil, "checks is required")
	case len(in.Checks) == 0:
		v.Add("checks", CodeInvalid, nil, "checks must list at least one check")
	case len(in.Checks) > maxChecksPerCheckIn:
		v.Add("checks", CodeTooLong, nil, "checks may list at most "+itoa(maxChecksPerCheckIn)+" checks")
	}
	out := make([]DeviceCheck, 0, len(in.Checks))
	seen := map[string]bool{}
	for i, c := range in.Checks {
		f := "checks[" + itoa(i) + "]."
		if i >= maxChecksPerCheckIn {
			break
		}
		switch {
		case c.CheckType == "":
			v.Add(f+"checkType", CodeRequired, nil, f+"checkType is required")
		case !slices.Contains(DeviceCheckTypes, c.CheckType):
			v.Add(f+"checkType", CodeInvalidEnum, c.CheckType, f+"checkType must be one of "+strings.Join(DeviceCheckTypes, ", "))
		case seen[c.CheckType]:
			v.Add(f+"checkType", CodeInvalid, c.CheckType, f+"checkType "+c.CheckType+" is listed twice")
		}
		seen[c.CheckType] = true
		if c.Passed == nil {
			v.Add(f+"passed", CodeRequired, nil, f+"passed is required")
		}
		var checked time.Time
		if c.CheckedAt == "" {
			v.Add(f+"checkedAt", CodeRequired, nil, f+"checkedAt is required")
		} else if t, err := time.Parse(time.RFC3339Nano, c.CheckedAt); err != nil {
			v.Add(f+"checkedAt", CodeInvalid, c.CheckedAt, f+"checkedAt must be an RFC 3339 time")
		} else if t.After(now.Add(checkInClockSkew)) {
			v.Add(f+"checkedAt", CodeInvalid, c.CheckedAt, f+"checkedAt is in the future; check the device's clock")
		} else {
			checked = t.UTC().Truncate(time.Millisecond)
		}
		var det DeviceCheckDetails
		if c.Details == nil {
			v.Add(f+"details", CodeRequired, nil, f+"details is required")
		} else {
			d := c.Details
			for _, s := range []struct {
				name string
				p    *string
				max  int
				dst  *string
			}{{"method", d.Method, maxCheckMethod, &det.Method}, {"raw", d.Raw, maxCheckRaw, &det.Raw}, {"message", d.Message, maxCheckMessage, &det.Message}} {
				if s.p == nil {
					v.Add(f+"details."+s.name, CodeRequired, nil, f+"details."+s.name+" is required")
					continue
				}
				maxLen(v, f+"details."+s.name, *s.p, s.max)
				*s.dst = *s.p
			}
			if d.Exception != nil {
				maxLen(v, f+"details.exception", *d.Exception, maxCheckException)
				det.Exception = d.Exception
			}
		}
		passed := c.Passed != nil && *c.Passed
		out = append(out, DeviceCheck{ID: NewID(PrefixDeviceCheck), CheckType: c.CheckType, Passed: passed, Details: det,
			CheckedAt: checked, ReceivedAt: now})
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// evaluateCompliance says whether a check-in makes a device compliant and
// which required checks failed or are missing.
func evaluateCompliance(checks []DeviceCheck) (bool, []string) {
	passed := map[string]bool{}
	reported := map[string]bool{}
	for _, c := range checks {
		reported[c.CheckType] = true
		passed[c.CheckType] = c.Passed
	}
	failed := []string{}
	for _, t := range DeviceCheckTypes {
		required := slices.Contains(RequiredDeviceChecks, t)
		if (reported[t] && !passed[t]) || (required && !reported[t]) {
			failed = append(failed, t)
		}
	}
	return len(failed) == 0, failed
}

// CheckInDevice records a check-in from the agent holding token. Another
// device's id (of this or another organization) and a deleted device are
// 404; an unknown or revoked token is 401.
func (a *App) CheckInDevice(ctx context.Context, token string, in DeviceCheckIn) (*DeviceCheckInResult, error) {
	if token == "" {
		if p := PrincipalFrom(ctx); p != nil {
			return nil, Errorf(ErrForbidden, "a check-in is made with the device's agent token (X-Device-Token), not with a member's credential")
		}
		return nil, ErrUnauthenticated
	}
	id, err := a.AuthenticateDeviceToken(ctx, token)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	checks, err := a.validateCheckIn(in, now)
	if err != nil {
		return nil, err
	}
	if in.DeviceID != id.DeviceID {
		return nil, ErrNotFound
	}
	compliant, failed := evaluateCompliance(checks)
	res := &DeviceCheckInResult{DeviceID: id.DeviceID, IsCompliant: compliant, FailedCheck: failed, NextCheckIn: now.Add(DeviceCheckInInterval)}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		d, err := a.store.GetDevice(ctx, id.OrganizationID, id.DeviceID)
		if err != nil {
			return err
		}
		for i := range checks {
			checks[i].DeviceID = d.ID
		}
		w := DeviceCheckInWrite{DeviceID: d.ID, Checks: checks, IsCompliant: compliant, AgentVersion: in.AgentVersion, At: now}
		changed := d.LastCheckIn == nil || d.IsCompliant != compliant
		if changed {
			w.ComplianceChangedAt = &now
		}
		if err := a.store.SaveDeviceCheckIn(ctx, id.OrganizationID, w); err != nil {
			return err
		}
		if err := a.store.TouchDeviceAgentToken(ctx, id.OrganizationID, id.TokenID, now); err != nil {
			return err
		}
		if !changed {
			return nil
		}
		data := DeviceComplianceChangedEventData{DeviceID: d.ID, PersonID: d.PersonID, PreviousIsCompliant: d.IsCompliant,
			IsCompliant: compliant, FailedChecks: failed, ChangedAt: now}
		after := *d
		after.IsCompliant, after.LastCheckIn = compliant, &now
		return a.record(WithPrincipal(ctx, agentPrincipal(id.OrganizationID, d)), Mutation{Action: "compliance_changed",
			ResourceType: "device", ResourceID: d.ID, Before: d, After: &after,
			Events: []Event{{Type: EventDeviceComplianceChanged, Data: data}}})
	})
	if err != nil {
		return nil, fmt.Errorf("check in device %s: %w", in.DeviceID, err)
	}
	return res, nil
}

// DeviceAgentStatus returns the token's device with its latest checks; a
// deviceID other than the token's is 404.
func (a *App) DeviceAgentStatus(ctx context.Context, token, deviceID string) (*DeviceDetail, error) {
	id, err := a.AuthenticateDeviceToken(ctx, token)
	if err != nil {
		return nil, err
	}
	if deviceID != "" && deviceID != id.DeviceID {
		return nil, ErrNotFound
	}
	d, err := a.store.GetDevice(ctx, id.OrganizationID, id.DeviceID)
	if err != nil {
		return nil, err
	}
	det, err := a.deviceDetail(ctx, id.OrganizationID, d)
	if err != nil {
		return nil, err
	}
	det.History = []DeviceCheck{}
	return det, nil
}

// agentDownloads is the directory the agent binaries are served from.
var agentDownloads struct {
	sync.RWMutex
	dir string
}

// SetAgentDownloadsDir sets the directory of agent binaries (config
// agent.downloads_dir); empty serves none.
func SetAgentDownloadsDir(dir string) {
	agentDownloads.Lock()
	agentDownloads.dir = dir
	agentDownloads.Unlock()
}

// ErrNoAgentDownloads is returned when no downloads directory is configured.
var ErrNoAgentDownloads = &PublicError{Kind: ErrNotFound,
	Msg: "no agent downloads are configured on this appliance: set agent.downloads_dir and put the release binaries there (make release)"}

// AgentDownload opens an agent file by name from the downloads directory.
// Names are plain file names; anything else is not found.
func (a *App) AgentDownload(name string) (*os.File, os.FileInfo, error) {
	agentDownloads.RLock()
	dir := agentDownloads.dir
	agentDownloads.RUnlock()
	if dir == "" {
		return nil, nil, ErrNoAgentDownloads
	}
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") || strings.ContainsAny(name, `/\`) {
		return nil, nil, ErrNotFound
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, nil, &PublicError{Kind: ErrNotFound, Msg: "agent file " + name + " is not in the downloads directory"}
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, ErrNotFound
	}
	return f, st, nil
}

// AgentFileName is the release file name of the agent for a platform.
func AgentFileName(goos, arch string) string {
	n := "compliance-" + goos + "-" + arch
	if goos == "windows" {
		n += ".exe"
	}
	return n
}
