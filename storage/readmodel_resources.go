package storage

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/compliance-appliance/compliance/app"
)

// The resources the read model serves. Each wraps its SQL read; the
// cache key of a list is its filter (every field, pagination and sort
// included), so each filter combination keeps its own page and total.

func filterKey(kind string, f any) string {
	b, err := json.Marshal(f)
	if err != nil {
		return "" // not cacheable: cachedRead is never called with it
	}
	return kind + string(b)
}

func cloneList[T any](l app.List[T], item func(T) T) app.List[T] {
	items := make([]T, len(l.Items))
	for i, it := range l.Items {
		items[i] = item(it)
	}
	l.Items = items
	return l
}

func clonePtr[T any](p *T, item func(T) T) *T {
	v := item(*p)
	return &v
}

func cloneVendor(v app.Vendor) app.Vendor {
	v.SubProcessors = slices.Clone(v.SubProcessors)
	return v
}

func cloneFinding(f app.Finding) app.Finding {
	f.LinkedControlIDs = slices.Clone(f.LinkedControlIDs)
	return f
}

func cloneEvidence(e app.Evidence) app.Evidence { return e }

func clonePerson(p app.Person) app.Person {
	p.Devices = slices.Clone(p.Devices)
	return p
}

// ListVendors returns a page of vendors matching every filter.
func (db *DB) ListVendors(ctx context.Context, orgID string, f app.VendorFilter) (app.List[app.Vendor], error) {
	k := filterKey("list", f)
	load := func(ctx context.Context) (app.List[app.Vendor], error) {
		all := f
		all.Page, all.Sort = app.Page{}, ""
		return db.listVendorsSQL(db.withTotal(ctx, orgID, "vendors", filterKey("total", all)), orgID, f)
	}
	if k == "" {
		return load(ctx)
	}
	return cachedRead(ctx, db, orgID, "vendors", k, load,
		func(l app.List[app.Vendor]) app.List[app.Vendor] { return cloneList(l, cloneVendor) }, listSize(vendorBytes, vendorSize))
}

// GetVendor returns one vendor.
func (db *DB) GetVendor(ctx context.Context, orgID, id string) (*app.Vendor, error) {
	return cachedRead(ctx, db, orgID, "vendors", "id"+id,
		func(ctx context.Context) (*app.Vendor, error) { return db.getVendorSQL(ctx, orgID, id) },
		func(v *app.Vendor) *app.Vendor { return clonePtr(v, cloneVendor) }, ptrSize(vendorBytes, vendorSize))
}

// ListFindings returns a page of findings matching every filter, oldest first.
func (db *DB) ListFindings(ctx context.Context, orgID string, f app.FindingFilter) (app.List[app.Finding], error) {
	load := func(ctx context.Context) (app.List[app.Finding], error) { return db.listFindingsSQL(ctx, orgID, f) }
	k := filterKey("list", f)
	if k == "" {
		return load(ctx)
	}
	return cachedRead(ctx, db, orgID, "findings", k, load,
		func(l app.List[app.Finding]) app.List[app.Finding] { return cloneList(l, cloneFinding) }, listSize(findingBytes, findingSize))
}

// GetFinding returns one finding with its linked controls.
func (db *DB) GetFinding(ctx context.Context, orgID, id string) (*app.Finding, error) {
	return cachedRead(ctx, db, orgID, "findings", "id"+id,
		func(ctx context.Context) (*app.Finding, error) { return db.getFindingSQL(ctx, orgID, id) },
		func(f *app.Finding) *app.Finding { return clonePtr(f, cloneFinding) }, ptrSize(findingBytes, findingSize))
}

// ListEvidence returns a page of evidence, newest first. Lists relative
// to the current time (current only, expiring by) are read from SQLite.
func (db *DB) ListEvidence(ctx context.Context, orgID string, f app.EvidenceFilter) (app.List[app.Evidence], error) {
	load := func(ctx context.Context) (app.List[app.Evidence], error) { return db.listEvidenceSQL(ctx, orgID, f) }
	if f.OnlyCurrent || f.ExpiringBy != nil {
		return load(ctx)
	}
	k := filterKey("list", f)
	if k == "" {
		return load(ctx)
	}
	return cachedRead(ctx, db, orgID, "evidence", k, load,
		func(l app.List[app.Evidence]) app.List[app.Evidence] { return cloneList(l, cloneEvidence) }, listSize(evidenceBytes, evidenceSize))
}

// GetEvidence returns one evidence record.
func (db *DB) GetEvidence(ctx context.Context, orgID, id string) (*app.Evidence, error) {
	return cachedRead(ctx, db, orgID, "evidence", "id"+id,
		func(ctx context.Context) (*app.Evidence, error) { return db.getEvidenceSQL(ctx, orgID, id) },
		func(e *app.Evidence) *app.Evidence { return clonePtr(e, cloneEvidence) }, ptrSize(evidenceBytes, evidenceSize))
}

// ListPeople returns a page of members.
func (db *DB) ListPeople(ctx context.Context, orgID string, f app.PersonFilter) (app.List[app.Person], error) {
	load := func(ctx context.Context) (app.List[app.Person], error) { return db.listPeopleSQL(ctx, orgID, f) }
	k := filterKey("list", f)
	if k == "" {
		return load(ctx)
	}
	return cachedRead(ctx, db, orgID, "people", k, load,
		func(l app.List[app.Person]) app.List[app.Person] { return cloneList(l, clonePerson) }, listSize(personBytes, personSize))
}

// GetPerson returns a member of the organization with their devices.
func (db *DB) GetPerson(ctx context.Context, orgID, id string) (*app.Person, error) {
	return cachedRead(ctx, db, orgID, "people", "id"+id,
		func(ctx context.Context) (*app.Person, error) { return db.getPersonSQL(ctx, orgID, id) },
		func(p *app.Person) *app.Person { return clonePtr(p, clonePerson) }, ptrSize(personBytes, personSize))
}
