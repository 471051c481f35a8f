package ui

import (
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

func init() {
	// yesNo shows an optional boolean a directory reported.
	uiFuncs["yesNo"] = func(b *bool) string {
		switch {
		case b == nil:
			return "Not reported"
		case *b:
			return "Yes"
		}
		return "No"
	}
}

// deviceSyncData adds to the sync page whether the connection's provider
// syncs devices and the organization's device sync provider.
func (s *Server) deviceSyncData(r *http.Request, c *app.Connection, d map[string]any) error {
	ps, err := s.app.AvailableSyncProviders(r.Context(), app.SyncTypeDevice)
	if err != nil {
		return err
	}
	for _, p := range ps.Providers {
		if p.Slug == c.ProviderSlug {
			d["DeviceSync"] = true
		}
	}
	dev, err := s.app.GetSyncProvider(r.Context(), app.SyncSettingDevice)
	if err != nil {
		return err
	}
	d["DeviceProvider"] = dev.Provider
	return nil
}
