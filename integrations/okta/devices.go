package okta

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.DeviceDirectoryProvider = (*Provider)(nil)

// device is one entry of GET /api/v1/devices?expand=user.
type device struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	LastUpdated string `json:"lastUpdated"`
	Profile     struct {
		DisplayName        string `json:"displayName"`
		Platform           string `json:"platform"`
		Manufacturer       string `json:"manufacturer"`
		Model              string `json:"model"`
		OSVersion          string `json:"osVersion"`
		SerialNumber       string `json:"serialNumber"`
		DiskEncryptionType string `json:"diskEncryptionType"`
	} `json:"profile"`
	Embedded struct {
		Users []struct {
			ManagementStatus string `json:"managementStatus"`
			User             user   `json:"user"`
		} `json:"users"`
	} `json:"_embedded"`
}

// Devices streams Okta's devices with their users (GET /api/v1/devices
// ?expand=user, 200 a page, paging with the Link header). The owner is the
// first user with an e-mail address.
func (p *Provider) Devices(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryDevice) error) error {
	s, err := parse(c)
	if err != nil {
		return err
	}
	ss := &session{p: p, s: s}
	q := url.Values{"limit": {strconv.Itoa(pageSize)}, "expand": {"user"}}
	return listPages(ctx, ss, "devices", s.org.String()+"/api/v1/devices?"+q.Encode(), func(devices []device) error {
		for i := range devices {
			if err := yield(devices[i].directoryDevice()); err != nil {
				return err
			}
		}
		return nil
	})
}

// directoryDevice maps one device: Okta states no compliance; a disk
// encryption type other than NONE is encrypted.
func (d *device) directoryDevice() app.DirectoryDevice {
	pr := &d.Profile
	out := app.DirectoryDevice{
		ExternalID:   d.ID,
		Name:         strings.TrimSpace(pr.DisplayName),
		Model:        strings.TrimSpace(strings.TrimSpace(pr.Manufacturer + " " + pr.Model)),
		Platform:     app.DevicePlatformOf(pr.Platform),
		OSVersion:    strings.TrimSpace(pr.OSVersion),
		SerialNumber: strings.TrimSpace(pr.SerialNumber),
		Status:       d.Status,
	}
	switch strings.ToUpper(strings.TrimSpace(pr.DiskEncryptionType)) {
	case "":
	case "NONE":
		out.Encrypted = new(bool)
	default:
		t := true
		out.Encrypted = &t
	}
	if t, err := time.Parse(time.RFC3339, d.LastUpdated); err == nil {
		out.LastSyncAt = &t
	}
	for _, u := range d.Embedded.Users {
		if e := strings.TrimSpace(u.User.Profile.Email); e != "" {
			out.OwnerEmail = e
			break
		}
	}
	return out
}
