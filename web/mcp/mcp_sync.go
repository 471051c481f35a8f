package mcp

import (
	"context"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

type listSyncRunsIn struct {
	pageIn
	ConnectionID string `json:"connectionId,omitempty" jsonschema:"only this directory connection's runs (icn_...)"`
	Status       string `json:"status,omitempty" jsonschema:"running, succeeded, failed or interrupted"`
}

// toolListSyncRuns lists directory sync runs with their counts, newest first.
func (s *Server) toolListSyncRuns(ctx context.Context, in listSyncRunsIn) (listOut[app.SyncRun], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.SyncRun]{}, err
	}
	l, err := s.app.ListSyncRuns(ctx, app.SyncRunFilter{ConnectionID: in.ConnectionID, Status: in.Status, Page: pg})
	if err != nil {
		return listOut[app.SyncRun]{}, err
	}
	return listOut[app.SyncRun]{Data: l.Items, Meta: httpx.NewMeta(pg, l.Total)}, nil
}
