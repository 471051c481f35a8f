package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Device platforms.
var devicePlatforms = []string{"macos", "windows", "linux"}

// Device is a computer used by a person, reported by the device agent or
// registered by an administrator.
type Device struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Hostname     string  `json:"hostname"`
	Platform     string  `json:"platform"`
	OSVersion    *string `json:"osVersion"`
	SerialNumber *string `json:"serialNumber"`
	// HardwareModel and AgentVersion are reported by the device agent.
	HardwareModel *string    `json:"hardwareModel"`
	AgentVersion  *string    `json:"agentVersion"`
	PersonID      *string    `json:"personId"`
	IsCompliant   bool       `json:"isCompliant"`
	LastCheckIn   *time.Time `json:"lastCheckInAt"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
	// Source is who registered the device: manual, agent, or the directory
	// provider that lists it (DeviceSources); Directory is what a device
	// sync last recorded of it (nil when no directory lists it).
	Source    string               `json:"source"`
	Directory *DeviceDirectoryInfo `json:"directory"`
}

// DeviceLink is the body of POST /v1/people/{id}/devices: either the id of a
// known device, or the fields of a device to register for the person.
type DeviceLink struct {
	DeviceID     string  `json:"deviceId"`
	Name         string  `json:"name"`
	Hostname     string  `json:"hostname"`
	Platform     string  `json:"platform"`
	OSVersion    *string `json:"osVersion"`
	SerialNumber *string `json:"serialNumber"`
}

// DeviceFilter narrows the device list.
type DeviceFilter struct {
	PersonID string
	Unlinked bool // only devices linked to nobody
	Platform string
	// Source keeps the devices of one source (DeviceSources).
	Source string
	// Compliant, when set, keeps compliant (true) or non-compliant devices.
	Compliant *bool
	// Stale, when set, keeps devices without a check-in since StaleBefore
	// (true; never checked in counts as stale) or with one (false).
	Stale       *bool
	StaleBefore time.Time
	Page        Page
}

// DeviceStore persists devices.
type DeviceStore interface {
	CreateDevice(ctx context.Context, orgID string, d *Device) error
	GetDevice(ctx context.Context, orgID, id string) (*Device, error)
	SetDevicePerson(ctx context.Context, orgID, id string, personID *string, at time.Time) error
	ListDevices(ctx context.Context, orgID string, f DeviceFilter) (List[Device], error)
}

// ListDevices lists devices; employees and contractors see their own.
func (a *App) ListDevices(ctx context.Context, f DeviceFilter) (List[Device], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Device]{}, err
	}
	if p.SeesOnlyAssigned() {
		if f.PersonID != "" && f.PersonID != p.UserID {
			return List[Device]{Items: []Device{}}, nil
		}
		f.PersonID = p.UserID
		if p.UserID == "" {
			return List[Device]{Items: []Device{}}, nil
		}
	}
	if f.Stale != nil {
		f.StaleBefore = a.Now().Add(-DeviceStaleAfter)
	}
	if f.Source != "" && !containsString(DeviceSources, f.Source) {
		return List[Device]{}, Invalid("source", CodeInvalidEnum, f.Source, "source must be one of "+strings.Join(DeviceSources, ", "))
	}
	return a.store.ListDevices(ctx, p.OrgID, f)
}

// GetDevice returns one device.
func (a *App) GetDevice(ctx context.Context, id string) (*Device, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	d, err := a.store.GetDevice(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && (d.PersonID == nil || *d.PersonID != p.UserID) {
		return nil, ErrNotFound
	}
	return d, nil
}

// LinkDevice assigns a device to a person, registering it first when the
// body describes a new device.
func (a *App) LinkDevice(ctx context.Context, personID string, in DeviceLink) (*Person, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if in.DeviceID == "" {
		v := NewValidationError()
		in.Name, in.Hostname = strings.TrimSpace(in.Name), strings.TrimSpace(in.Hostname)
		if in.Name == "" {
			v.Add("name", CodeRequired, nil, "name is required (or give deviceId)")
		}
		if in.Hostname == "" {
			v.Add("hostname", CodeRequired, nil, "hostname is required (or give deviceId)")
		}
		if in.Platform == "" {
			v.Add("platform", CodeRequired, nil, "platform is required (or give deviceId)")
		}
		oneOf(v, "platform", in.Platform, devicePlatforms)
		maxLen(v, "name", in.Name, 200)
		maxLen(v, "hostname", in.Hostname, 255)
		if err := v.Err(); err != nil {
			return nil, err
		}
	}
	var out *Person
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.store.GetPerson(ctx, p.OrgID, personID); err != nil {
			return err
		}
		now := a.Now()
		var before *Device
		var dev *Device
		if in.DeviceID != "" {
			d, err := a.store.GetDevice(ctx, p.OrgID, in.DeviceID)
			if errors.Is(err, ErrNotFound) {
				return Invalid("deviceId", CodeUnknownReference, in.DeviceID, "deviceId must be a device of this organization")
			}
			if err != nil {
				return err
			}
			b := *d
			before = &b
			if err := a.store.SetDevicePerson(ctx, p.OrgID, d.ID, &personID, now); err != nil {
				return err
			}
			d.PersonID, d.UpdatedAt = &personID, now
			dev = d
		} else {
			dev = &Device{ID: NewID(PrefixDevice), Name: in.Name, Hostname: in.Hostname, Platform: in.Platform,
				OSVersion: in.OSVersion, SerialNumber: in.SerialNumber, PersonID: &personID, CreatedAt: now, UpdatedAt: now}
			if err := a.store.CreateDevice(ctx, p.OrgID, dev); err != nil {
				return err
			}
		}
		got, err := a.store.GetPerson(ctx, p.OrgID, personID)
		if err != nil {
			return err
		}
		out = got
		return a.record(ctx, Mutation{Action: "linked", ResourceType: "device", ResourceID: dev.ID, Before: before, After: dev,
			Events: []Event{ResourceEvent("device", "linked", dev)}})
	})
	if err != nil {
		return nil, fmt.Errorf("link device to %s: %w", personID, err)
	}
	return out, nil
}

// UnlinkDevice removes a device from a person; the device record stays.
func (a *App) UnlinkDevice(ctx context.Context, personID, deviceID string) (*Person, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Person
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.store.GetPerson(ctx, p.OrgID, personID); err != nil {
			return err
		}
		d, err := a.store.GetDevice(ctx, p.OrgID, deviceID)
		if err != nil {
			return err
		}
		if d.PersonID == nil || *d.PersonID != personID {
			return ErrNotFound
		}
		now := a.Now()
		if err := a.store.SetDevicePerson(ctx, p.OrgID, deviceID, nil, now); err != nil {
			return err
		}
		after := *d
		after.PersonID, after.UpdatedAt = nil, now
		got, err := a.store.GetPerson(ctx, p.OrgID, personID)
		if err != nil {
			return err
		}
		out = got
		return a.record(ctx, Mutation{Action: "unlinked", ResourceType: "device", ResourceID: deviceID, Before: d, After: &after,
			Events: []Event{ResourceEvent("device", "unlinked", &after)}})
	})
	if err != nil {
		return nil, fmt.Errorf("unlink device %s: %w", deviceID, err)
	}
	return out, nil
}
