package googleworkspace

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.DeviceDirectoryProvider = (*Provider)(nil)

// Device scopes, delegated beside Scope for device sync.
const (
	ScopeMobileDevices   = "https://www.googleapis.com/auth/admin.directory.device.mobile.readonly"
	ScopeChromeOSDevices = "https://www.googleapis.com/auth/admin.directory.device.chromeos.readonly"
)

const (
	mobilePageSize   = 100 // the API's maximum for mobile devices
	chromeosPageSize = 200
)

// mobileDevice is one entry of customer/{customer}/devices/mobile.
type mobileDevice struct {
	ResourceID       string   `json:"resourceId"`
	DeviceID         string   `json:"deviceId"`
	SerialNumber     string   `json:"serialNumber"`
	Model            string   `json:"model"`
	OS               string   `json:"os"`
	Type             string   `json:"type"`
	Status           string   `json:"status"`
	Email            []string `json:"email"`
	Name             []string `json:"name"`
	LastSync         string   `json:"lastSync"`
	EncryptionStatus string   `json:"encryptionStatus"`
}

type mobilePage struct {
	Devices       []mobileDevice `json:"mobiledevices"`
	NextPageToken string         `json:"nextPageToken"`
}

// chromeDevice is one entry of customer/{customer}/devices/chromeos.
type chromeDevice struct {
	DeviceID      string `json:"deviceId"`
	SerialNumber  string `json:"serialNumber"`
	Model         string `json:"model"`
	OSVersion     string `json:"osVersion"`
	Status        string `json:"status"`
	AnnotatedUser string `json:"annotatedUser"`
	LastSync      string `json:"lastSync"`
	RecentUsers   []struct {
		Type  string `json:"type"`
		Email string `json:"email"`
	} `json:"recentUsers"`
}

type chromePage struct {
	Devices       []chromeDevice `json:"chromeosdevices"`
	NextPageToken string         `json:"nextPageToken"`
}

// Devices streams the account's mobile devices, then its ChromeOS devices,
// each paged with pageToken. The token asks for the two device scopes
// only.
func (p *Provider) Devices(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryDevice) error) error {
	s, err := p.parseScoped(c, ScopeMobileDevices, ScopeChromeOSDevices)
	if err != nil {
		return err
	}
	ss := p.session(ctx, s)
	base := "/admin/directory/v1/customer/" + url.PathEscape(s.customer) + "/devices/"
	err = listPages(ctx, ss, "mobile devices", base+"mobile",
		func(token string) url.Values { return paged(mobilePageSize, token, "projection", "FULL") },
		func(res *mobilePage) (string, error) {
			for i := range res.Devices {
				if err := yield(res.Devices[i].directoryDevice()); err != nil {
					return "", err
				}
			}
			return res.NextPageToken, nil
		})
	if err != nil {
		return err
	}
	return listPages(ctx, ss, "ChromeOS devices", base+"chromeos",
		func(token string) url.Values { return paged(chromeosPageSize, token, "projection", "FULL") },
		func(res *chromePage) (string, error) {
			for i := range res.Devices {
				if err := yield(res.Devices[i].directoryDevice()); err != nil {
					return "", err
				}
			}
			return res.NextPageToken, nil
		})
}

func googleTime(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.Year() < 2000 {
		return nil
	}
	return &t
}

// directoryDevice maps a mobile device: the owner is its first e-mail; the
// id is resourceId (the API's key), else deviceId.
func (d *mobileDevice) directoryDevice() app.DirectoryDevice {
	out := app.DirectoryDevice{
		ExternalID:   "mobile:" + firstNonEmpty(d.ResourceID, d.DeviceID),
		Model:        strings.TrimSpace(d.Model),
		Platform:     app.DevicePlatformOf(firstNonEmpty(d.OS, d.Type)),
		SerialNumber: strings.TrimSpace(d.SerialNumber),
		Status:       d.Status,
		LastSyncAt:   googleTime(d.LastSync),
	}
	if firstNonEmpty(d.ResourceID, d.DeviceID) == "" {
		out.ExternalID = ""
	}
	if strings.HasPrefix(strings.ToUpper(d.Type), "IOS") {
		out.Platform = "ios"
	} else if strings.HasPrefix(strings.ToUpper(d.Type), "ANDROID") {
		out.Platform = "android"
	}
	// os is "Android 14" or "iOS 17.4.1": the version follows the name.
	if _, v, ok := strings.Cut(strings.TrimSpace(d.OS), " "); ok {
		out.OSVersion = strings.TrimSpace(v)
	}
	if len(d.Email) > 0 {
		out.OwnerEmail = strings.TrimSpace(d.Email[0])
	}
	if len(d.Name) > 0 {
		out.Name = strings.TrimSpace(d.Name[0]) + "'s " + out.Model
	}
	switch strings.ToLower(strings.TrimSpace(d.EncryptionStatus)) {
	case "encrypted":
		t := true
		out.Encrypted = &t
	case "not encrypted", "unencrypted":
		out.Encrypted = new(bool)
	}
	return out
}

// directoryDevice maps a ChromeOS device: the owner is the annotated user,
// else the most recent managed user.
func (d *chromeDevice) directoryDevice() app.DirectoryDevice {
	out := app.DirectoryDevice{
		Model:        strings.TrimSpace(d.Model),
		Platform:     "chromeos",
		OSVersion:    strings.TrimSpace(d.OSVersion),
		SerialNumber: strings.TrimSpace(d.SerialNumber),
		Status:       d.Status,
		LastSyncAt:   googleTime(d.LastSync),
		OwnerEmail:   strings.TrimSpace(d.AnnotatedUser),
	}
	if d.DeviceID != "" {
		out.ExternalID = "chromeos:" + d.DeviceID
	}
	if out.OwnerEmail == "" {
		for _, u := range d.RecentUsers {
			if strings.EqualFold(u.Type, "USER_TYPE_MANAGED") && u.Email != "" {
				out.OwnerEmail = strings.TrimSpace(u.Email)
				break
			}
		}
	}
	out.Name = firstNonEmpty(out.SerialNumber, d.DeviceID)
	if out.Model != "" {
		out.Name = out.Model + " " + out.Name
	}
	return out
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
