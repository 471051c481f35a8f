package entra

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.DeviceDirectoryProvider = (*Provider)(nil)

// devicesPath is Intune's managed devices through Graph; it needs the
// application permission PermissionDevices and an Intune licence.
const devicesPath = "/v1.0/deviceManagement/managedDevices"

// managedDevice is one entry of GET /deviceManagement/managedDevices.
type managedDevice struct {
	ID                string `json:"id"`
	DeviceName        string `json:"deviceName"`
	OperatingSystem   string `json:"operatingSystem"`
	OSVersion         string `json:"osVersion"`
	ComplianceState   string `json:"complianceState"`
	IsEncrypted       *bool  `json:"isEncrypted"`
	UserPrincipalName string `json:"userPrincipalName"`
	EmailAddress      string `json:"emailAddress"`
	LastSyncDateTime  string `json:"lastSyncDateTime"`
	SerialNumber      string `json:"serialNumber"`
	Manufacturer      string `json:"manufacturer"`
	Model             string `json:"model"`
	ManagementState   string `json:"managementState"`
}

// devicesURL is the first page of managed devices with the fields sync
// reads.
func (ss *session) devicesURL() string {
	return ss.url(devicesPath, url.Values{"$select": {"id,deviceName,operatingSystem,osVersion,complianceState,isEncrypted," +
		"userPrincipalName,emailAddress,lastSyncDateTime,serialNumber,manufacturer,model,managementState"}})
}

// Devices streams Intune's managed devices page by page, following
// @odata.nextLink.
func (p *Provider) Devices(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryDevice) error) error {
	s, err := parse(c)
	if err != nil {
		return err
	}
	ss := p.session(ctx, s)
	ss.perm = PermissionDevices
	return listPages(ctx, ss, "managed devices", ss.devicesURL(), func(devices []managedDevice) error {
		for i := range devices {
			if err := yield(devices[i].directoryDevice()); err != nil {
				return err
			}
		}
		return nil
	})
}

// directoryDevice maps one managed device: the owner is the device's
// e-mail address, else its user principal name; complianceState is
// Intune's (compliant, noncompliant, inGracePeriod, unknown, ...).
func (d *managedDevice) directoryDevice() app.DirectoryDevice {
	out := app.DirectoryDevice{
		ExternalID:   d.ID,
		Name:         strings.TrimSpace(d.DeviceName),
		Model:        strings.TrimSpace(strings.TrimSpace(d.Manufacturer) + " " + strings.TrimSpace(d.Model)),
		Platform:     app.DevicePlatformOf(d.OperatingSystem),
		OSVersion:    strings.TrimSpace(d.OSVersion),
		SerialNumber: strings.TrimSpace(d.SerialNumber),
		OwnerEmail:   strings.TrimSpace(d.EmailAddress),
		Status:       d.ManagementState,
		Compliance:   d.ComplianceState,
		Encrypted:    d.IsEncrypted,
	}
	if out.OwnerEmail == "" && !strings.Contains(d.UserPrincipalName, "#EXT#") {
		out.OwnerEmail = strings.TrimSpace(d.UserPrincipalName)
	}
	// Intune gives 0001-01-01T00:00:00Z for a device that never synced.
	if t, err := time.Parse(time.RFC3339, d.LastSyncDateTime); err == nil && t.Year() > 1 {
		out.LastSyncAt = &t
	}
	return out
}
