package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Device sync lists the devices a directory manages (Google Workspace's
// mobile and ChromeOS devices, Microsoft Intune's managed devices through
// Entra ID, Okta's devices) into the device register. Devices are matched
// by the directory's id, then by serial number; a device the agent
// reports, or one an administrator registered, is never overwritten: the
// directory's fields are recorded beside it. Devices the directory no
// longer lists are marked removed (never deleted), and only after a
// complete listing.

// Device sources.
const (
	DeviceSourceManual = "manual"
	DeviceSourceAgent  = "agent"
)

// DeviceSources are the values of a device's source: manual, agent, or
// the slug of the directory provider that lists it.
var DeviceSources = []string{DeviceSourceManual, DeviceSourceAgent, "google_workspace", "entra_id", "okta"}

// Device sync actions beyond the employee sync's.
const (
	// SyncLink records a directory's fields beside a device it does not
	// own (agent-reported or manually registered, same serial number).
	SyncLink = "link"
	// SyncRemove marks a device the directory no longer lists.
	SyncRemove = "remove"
)

// syncDeviceBatch is how many device changes one transaction commits.
const syncDeviceBatch = 200

// DeviceDirectoryProvider is an integration provider with
// CapabilityDeviceSync.
type DeviceDirectoryProvider interface {
	IntegrationProvider
	// Devices calls yield once per device, page by page as the directory
	// answers. An error from yield stops the listing and is returned.
	Devices(ctx context.Context, c ConnectionTarget, yield func(DirectoryDevice) error) error
}

// DirectoryDevice is one device as a directory lists it.
type DirectoryDevice struct {
	ExternalID   string
	Name         string
	Model        string
	Platform     string // DevicePlatformOf the directory's operating system
	OSVersion    string
	SerialNumber string
	OwnerEmail   string
	Status       string // the directory's own status (APPROVED, ACTIVE, ...)
	// Compliance is the directory's compliance state (Intune's
	// compliant, noncompliant, ...); empty when it has none.
	Compliance string
	Encrypted  *bool
	LastSyncAt *time.Time
}

// DeviceDirectoryInfo is what a device sync last recorded of a device.
type DeviceDirectoryInfo struct {
	Provider        string     `json:"provider"`
	ConnectionID    string     `json:"connectionId"`
	ExternalID      string     `json:"externalId"`
	OwnerEmail      *string    `json:"ownerEmail"`
	Model           *string    `json:"model"`
	Status          *string    `json:"status"`
	ComplianceState *string    `json:"complianceState"`
	Encrypted       *bool      `json:"encrypted"`
	LastSyncAt      *time.Time `json:"lastSyncAt"`
	// RemovedAt is when a complete listing no longer contained the device.
	RemovedAt *time.Time `json:"removedAt"`
	UpdatedAt *time.Time `json:"updatedAt"`
}

// DeviceSyncStore persists what device sync changes.
type DeviceSyncStore interface {
	// DeviceSyncDevices lists every device of the organization with its
	// directory fields.
	DeviceSyncDevices(ctx context.Context, orgID string) ([]Device, error)
	// SaveDirectoryDevice writes a device a directory owns: its own
	// fields, its person and its directory fields.
	SaveDirectoryDevice(ctx context.Context, orgID string, d *Device) error
	// SetDeviceDirectory writes only a device's directory fields.
	SetDeviceDirectory(ctx context.Context, orgID, id string, dir *DeviceDirectoryInfo) error
	// LastSyncRunOfType is the connection's latest run of the type that
	// was not a dry run.
	LastSyncRunOfType(ctx context.Context, orgID, connectionID, syncType string) (*SyncRun, error)
	// DeviceSyncOrganizations lists the organizations with a device sync
	// provider chosen, with it.
	DeviceSyncOrganizations(ctx context.Context) (map[string]string, error)
}

// DevicePlatformOf maps a directory's operating system name to a device
// platform: macos, windows, linux, ios, android, chromeos, else other.
func DevicePlatformOf(os string) string {
	s := strings.ToLower(strings.TrimSpace(os))
	s = strings.NewReplacer(" ", "", "_", "", "-", "").Replace(s)
	switch {
	case s == "":
		return "other"
	case strings.HasPrefix(s, "ios"), strings.HasPrefix(s, "ipados"), strings.HasPrefix(s, "iphone"), strings.HasPrefix(s, "ipad"):
		return "ios"
	case strings.HasPrefix(s, "macos"), strings.HasPrefix(s, "macosx"), strings.HasPrefix(s, "osx"), s == "mac":
		return "macos"
	case strings.HasPrefix(s, "windows"):
		return "windows"
	case strings.HasPrefix(s, "android"):
		return "android"
	case strings.HasPrefix(s, "chrome"):
		return "chromeos"
	case strings.HasPrefix(s, "linux"), strings.HasPrefix(s, "ubuntu"), strings.HasPrefix(s, "debian"), strings.HasPrefix(s, "fedora"), strings.HasPrefix(s, "rhel"):
		return "linux"
	}
	return "other"
}

// deviceDirectoryProvider returns the provider as a device directory, or a
// clear error naming the field.
func (a *App) deviceDirectoryProvider(slug, field string) (DeviceDirectoryProvider, error) {
	prov, ok := a.provider(slug)
	if !ok {
		return nil, Errorf(ErrNotFound, "provider %s is not available in this build", slug)
	}
	dp, ok := prov.(DeviceDirectoryProvider)
	if !ok || !containsString(prov.Definition().Capabilities, CapabilityDeviceSync) {
		msg := fmt.Sprintf("provider %s does not sync devices", slug)
		if l := a.syncProviderSlugs(CapabilityDeviceSync); len(l) > 0 {
			msg += "; choose one of " + strings.Join(l, ", ")
		}
		return nil, Invalid(field, CodeInvalid, slug, msg)
	}
	return dp, nil
}

// SyncDevices runs a device sync of a connection of the provider and
// returns the finished run. A dry run plans and records the run without
// changing any device.
func (a *App) SyncDevices(ctx context.Context, providerSlug, connectionID string, dryRun bool) (*SyncRun, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if _, err := a.deviceDirectoryProvider(providerSlug, "providerSlug"); err != nil {
		return nil, err
	}
	c, err := a.syncConnection(ctx, p, providerSlug, connectionID)
	if err != nil {
		return nil, err
	}
	return a.runDeviceSync(ctx, p, c, TriggerManual, dryRun)
}

func (a *App) runDeviceSync(ctx context.Context, p *Principal, c *Connection, trigger string, dryRun bool) (*SyncRun, error) {
	dp, err := a.deviceDirectoryProvider(c.ProviderSlug, "providerSlug")
	if err != nil {
		return nil, err
	}
	return a.runSyncPass(ctx, p, c, SyncTypeDevice, trigger, dryRun, func(run *SyncRun) (syncPass, error) {
		s, err := a.newDeviceSyncSession(ctx, p, c, run)
		if err != nil {
			return nil, err
		}
		return devicePass{s, dp}, nil
	})
}

// deviceSyncSession is one device sync in progress: the register's
// devices (bounded by the register, not the directory), the people by
// e-mail, the changes waiting for their batch and a bounded buffer of
// results.
type deviceSyncSession struct {
	a   *App
	p   *Principal
	ctx context.Context
	c   *Connection
	run *SyncRun

	byExternal map[string]*Device // devices with this connection's fields
	bySerial   map[string]*Device // the others with a serial number
	people     map[string]string  // normalized e-mail -> person id
	seen       map[string]bool    // external ids listed

	pending     []deviceChange
	results     []SyncRunResult
	seq         int
	counts      SyncCounts
	applyErrors int
}

// deviceChange is one planned change to the register.
type deviceChange struct {
	action string
	dev    *Device // after the change
	before *Device // nil for a new device
	// beside: only the directory fields are written (the device is the
	// agent's or an administrator's).
	beside bool
	fields map[string]string
	reason string
	email  string
}

func (a *App) newDeviceSyncSession(ctx context.Context, p *Principal, c *Connection, run *SyncRun) (*deviceSyncSession, error) {
	devices, err := a.store.DeviceSyncDevices(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	members, err := a.store.SyncMembers(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	s := &deviceSyncSession{a: a, p: p, ctx: context.WithoutCancel(ctx), c: c, run: run,
		byExternal: map[string]*Device{}, bySerial: map[string]*Device{}, people: make(map[string]string, len(members)), seen: map[string]bool{}}
	for i := range devices {
		d := &devices[i]
		switch {
		case d.Directory != nil && d.Directory.ConnectionID == c.ID:
			s.byExternal[d.Directory.ExternalID] = d
		case d.Directory == nil && d.SerialNumber != nil && normalSerial(*d.SerialNumber) != "":
			if _, dup := s.bySerial[normalSerial(*d.SerialNumber)]; !dup {
				s.bySerial[normalSerial(*d.SerialNumber)] = d
			}
		}
	}
	for _, m := range members {
		s.people[NormalizeEmail(m.Email)] = m.PersonID
	}
	return s, nil
}

// normalSerial is the form serial numbers are matched in.
func normalSerial(s string) string {
	return strings.ToUpper(strings.TrimSpace(s))
}

// owned reports whether the directory owns the device's own fields: it
// created it and the agent does not report it.
func (s *deviceSyncSession) owned(d *Device) bool {
	return d.Source == s.c.ProviderSlug
}

// device plans one listed device.
func (s *deviceSyncSession) device(in DirectoryDevice) error {
	s.counts.Found++
	ext := strings.TrimSpace(in.ExternalID)
	name := clipRunes(strings.TrimSpace(in.Name), 200)
	if name == "" {
		name = clipRunes(strings.TrimSpace(in.Model), 200)
	}
	if name == "" {
		name = ext
	}
	email := NormalizeEmail(in.OwnerEmail)
	ch := deviceChange{email: email}
	switch {
	case ext == "":
		s.result(deviceChange{action: SyncError, email: email, reason: "the directory gave the device no id"}, name)
		s.counts.Errors++
		return s.maybeFlush()
	case s.seen[ext]:
		s.result(deviceChange{action: SyncError, email: email, reason: "the directory listed the device id " + ext + " twice"}, name)
		s.counts.Errors++
		return s.maybeFlush()
	}
	s.seen[ext] = true
	var personID *string
	ownerNote := ""
	if email != "" {
		if id, ok := s.people[email]; ok {
			personID = Ptr(id)
		} else {
			ownerNote = "owner " + email + " is not in the people register"
		}
	}
	now := s.a.Now()
	dir := &DeviceDirectoryInfo{Provider: s.c.ProviderSlug, ConnectionID: s.c.ID, ExternalID: ext,
		OwnerEmail: optStr(email), Model: optStr(clipRunes(strings.TrimSpace(in.Model), 200)), Status: optStr(strings.TrimSpace(in.Status)),
		ComplianceState: optStr(strings.TrimSpace(in.Compliance)), Encrypted: in.Encrypted, LastSyncAt: in.LastSyncAt}
	platform := in.Platform
	if !containsString(directoryPlatforms, platform) {
		platform = DevicePlatformOf(platform)
	}
	cur := s.byExternal[ext]
	if cur == nil && in.SerialNumber != "" {
		if d := s.bySerial[normalSerial(in.SerialNumber)]; d != nil {
			// A device the agent reports or an administrator registered:
			// the directory's fields go beside it, its own stay.
			delete(s.bySerial, normalSerial(in.SerialNumber))
			after := *d
			dir.UpdatedAt = &now
			after.Directory = dir
			s.byExternal[ext] = &after
			ch.action, ch.dev, ch.before, ch.beside = SyncLink, &after, d, true
			ch.reason = "recorded beside the " + d.Source + " device with the same serial number; its own fields are kept"
			return s.plan(ch, name)
		}
	}
	if cur == nil {
		d := &Device{ID: NewID(PrefixDevice), Name: name, Hostname: name, Platform: platform, OSVersion: optStr(strings.TrimSpace(in.OSVersion)),
			SerialNumber: optStr(strings.TrimSpace(in.SerialNumber)), HardwareModel: dir.Model, PersonID: personID,
			IsCompliant: strings.EqualFold(in.Compliance, "compliant"), CreatedAt: now, UpdatedAt: now, Source: s.c.ProviderSlug}
		dir.UpdatedAt = &now
		d.Directory = dir
		s.byExternal[ext] = d
		ch.action, ch.dev, ch.reason = SyncCreate, d, ownerNote
		return s.plan(ch, name)
	}
	fields := map[string]string{}
	after := *cur
	old := cur.Directory
	diff := func(key string, a, b *string) {
		if derefStr(a) != derefStr(b) {
			fields[key] = derefStr(b)
		}
	}
	diff("ownerEmail", old.OwnerEmail, dir.OwnerEmail)
	diff("model", old.Model, dir.Model)
	diff("status", old.Status, dir.Status)
	diff("complianceState", old.ComplianceState, dir.ComplianceState)
	if !sameTwoFactor(old.Encrypted, dir.Encrypted) {
		fields["encrypted"] = boolText(dir.Encrypted)
	}
	if !sameTime(old.LastSyncAt, dir.LastSyncAt) {
		fields["lastSyncAt"] = timeText(dir.LastSyncAt)
	}
	reactivated := old.RemovedAt != nil
	if reactivated {
		fields["removed"] = "false"
	}
	beside := !s.owned(cur)
	if !beside {
		if cur.Name != name {
			fields["name"] = name
			after.Name, after.Hostname = name, name
		}
		if cur.Platform != platform {
			fields["platform"] = platform
			after.Platform = platform
		}
		osv := optStr(strings.TrimSpace(in.OSVersion))
		diff("osVersion", cur.OSVersion, osv)
		after.OSVersion = osv
		serial := optStr(strings.TrimSpace(in.SerialNumber))
		diff("serialNumber", cur.SerialNumber, serial)
		after.SerialNumber = serial
		if derefStr(cur.HardwareModel) != derefStr(dir.Model) {
			after.HardwareModel = dir.Model
		}
		if derefStr(cur.PersonID) != derefStr(personID) {
			fields["personId"] = derefStr(personID)
			after.PersonID = personID
		}
		if c := strings.EqualFold(in.Compliance, "compliant"); c != cur.IsCompliant {
			fields["isCompliant"] = fmt.Sprint(c)
			after.IsCompliant = c
		}
	}
	if len(fields) == 0 {
		s.counts.Unchanged++
		return nil
	}
	dir.UpdatedAt = &now
	after.Directory = dir
	if !beside {
		after.UpdatedAt = now
	}
	s.byExternal[ext] = &after
	ch.action, ch.dev, ch.before, ch.beside, ch.fields, ch.reason = SyncUpdate, &after, cur, beside, fields, ownerNote
	if reactivated {
		ch.action = SyncReactivate
	}
	if beside && ch.reason == "" {
		ch.reason = "the directory's fields only: the " + cur.Source + " device's own fields are kept"
	}
	return s.plan(ch, name)
}

// directoryPlatforms are the platforms a directory device may have.
var directoryPlatforms = []string{"macos", "windows", "linux", "ios", "android", "chromeos", "other"}

// removeUnlisted plans the removal of the connection's devices the
// complete listing did not contain.
func (s *deviceSyncSession) removeUnlisted() {
	now := s.a.Now()
	exts := make([]string, 0, len(s.byExternal))
	for ext := range s.byExternal {
		exts = append(exts, ext)
	}
	sort.Strings(exts)
	for _, ext := range exts {
		d := s.byExternal[ext]
		if s.seen[ext] || d.Directory.RemovedAt != nil {
			continue
		}
		after := *d
		dir := *d.Directory
		dir.RemovedAt, dir.UpdatedAt = &now, &now
		after.Directory = &dir
		ch := deviceChange{action: SyncRemove, dev: &after, before: d, beside: !s.owned(d), email: derefStr(dir.OwnerEmail),
			reason: "no longer listed by the directory"}
		if ch.beside {
			ch.reason += "; the " + d.Source + " device itself stays"
		}
		_ = s.plan(ch, d.Name)
	}
}

// plan counts a change and queues it (or, dry, only records it).
func (s *deviceSyncSession) plan(ch deviceChange, name string) error {
	switch ch.action {
	case SyncCreate:
		s.counts.Created++
	case SyncUpdate, SyncLink:
		s.counts.Updated++
	case SyncReactivate:
		s.counts.Reactivated++
	case SyncRemove:
		s.counts.Deactivated++
	}
	if s.run.DryRun {
		s.result(ch, name)
		return s.maybeFlush()
	}
	s.pending = append(s.pending, ch)
	if len(s.pending) >= syncDeviceBatch {
		s.commit(s.ctx)
	}
	return s.maybeFlush()
}

func (s *deviceSyncSession) maybeFlush() error {
	if len(s.results) >= syncResultBatch {
		return s.flush(s.ctx)
	}
	return nil
}

// commit writes the waiting changes in one transaction, each in a
// savepoint of its own with its audit record: a change the register
// refuses is an error result and the others are still made. Results are
// kept only once the batch has committed.
func (s *deviceSyncSession) commit(ctx context.Context) {
	batch := s.pending
	s.pending = nil
	if len(batch) == 0 {
		return
	}
	errs := make([]error, len(batch))
	err := s.a.store.InTx(ctx, func(ctx context.Context) error {
		for i := range batch {
			ch := &batch[i]
			errs[i] = s.a.store.InTx(ctx, func(ctx context.Context) error { return s.write(ctx, ch) })
		}
		return nil
	})
	for i := range batch {
		ch := batch[i]
		if err != nil {
			errs[i] = err
		}
		if errs[i] != nil {
			s.applyErrors++
			s.forget(&ch)
			reason := "not applied: " + clipRunes(publicMessage(errs[i]), 500)
			if ch.reason != "" {
				reason = ch.reason + "; " + reason
			}
			ch.action, ch.reason = SyncError, reason
		}
		s.result(ch, ch.dev.Name)
	}
}

// forget puts the session back as it was before a change that failed.
func (s *deviceSyncSession) forget(ch *deviceChange) {
	ext := ch.dev.Directory.ExternalID
	if ch.before != nil && ch.before.Directory != nil && ch.before.Directory.ConnectionID == s.c.ID {
		s.byExternal[ext] = ch.before
		return
	}
	delete(s.byExternal, ext)
}

func (s *deviceSyncSession) write(ctx context.Context, ch *deviceChange) error {
	orgID := s.p.OrgID
	var err error
	switch {
	case ch.action == SyncCreate:
		err = s.a.store.CreateDevice(ctx, orgID, ch.dev)
	case ch.beside:
		err = s.a.store.SetDeviceDirectory(ctx, orgID, ch.dev.ID, ch.dev.Directory)
	default:
		err = s.a.store.SaveDirectoryDevice(ctx, orgID, ch.dev)
	}
	if err != nil {
		return err
	}
	var before any
	if ch.before != nil {
		before = ch.before
	}
	return s.a.record(ctx, Mutation{Action: "directory_" + ch.action, ResourceType: "device", ResourceID: ch.dev.ID, Before: before, After: ch.dev})
}

// result keeps one change's result. Unchanged devices are only counted.
func (s *deviceSyncSession) result(ch deviceChange, name string) {
	s.seq++
	r := SyncRunResult{Seq: s.seq, Action: ch.action, Email: ch.email, Name: name, Fields: ch.fields, Reason: ch.reason}
	if r.Fields == nil {
		r.Fields = map[string]string{}
	}
	if ch.dev != nil {
		r.DeviceID = Ptr(ch.dev.ID)
		r.PersonID = ch.dev.PersonID
	}
	s.results = append(s.results, r)
}

func (s *deviceSyncSession) flush(ctx context.Context) error {
	return s.a.writeSyncResults(ctx, s.p.OrgID, s.run.ID, &s.results)
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func boolText(b *bool) string {
	if b == nil {
		return ""
	}
	return fmt.Sprint(*b)
}

func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// outsideAgentFleet reports whether device compliance evidence leaves the
// device out: a directory's device on a platform the agent does not run
// on (phones, Chromebooks), or one its directory no longer lists. A
// directory's laptop without the agent counts like one registered by
// hand: stale until its agent reports.
func (d *Device) outsideAgentFleet() bool {
	if d.Directory == nil || d.Source == DeviceSourceAgent || d.Source == DeviceSourceManual {
		return false
	}
	return !containsString(devicePlatforms, d.Platform) || d.Directory.RemovedAt != nil
}
