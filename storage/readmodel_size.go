package storage

import (
	"reflect"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// Memory estimates of the read model's values, computed from their
// fields without encoding them: the value's own size, plus each string's
// bytes and each pointer's target. Strings, pointers and slices read from
// SQLite are each their own allocation, rounded up to a size class: a
// fixed allocOverhead stands for that rounding. The estimate only has to
// stay within a small factor of the heap the value really holds
// (TestReadModelSizeEstimate): it bounds the cache's memory and decides
// eviction.

const allocOverhead = 8

var (
	vendorBytes   = int64(reflect.TypeFor[app.Vendor]().Size())
	findingBytes  = int64(reflect.TypeFor[app.Finding]().Size())
	evidenceBytes = int64(reflect.TypeFor[app.Evidence]().Size())
	personBytes   = int64(reflect.TypeFor[app.Person]().Size())
	subProcBytes  = int64(reflect.TypeFor[app.SubProcessor]().Size())
	deviceBytes   = int64(reflect.TypeFor[app.DeviceSummary]().Size())
	timeBytes     = int64(reflect.TypeFor[time.Time]().Size())
	// entryBytes is the cache's own bookkeeping per value: its key, list
	// element and map slot.
	entryBytes int64 = 256
)

func strBytes(s string) int64 {
	if s == "" {
		return 0
	}
	return int64(len(s)) + allocOverhead
}

func strPtrBytes(p *string) int64 {
	if p == nil {
		return 0
	}
	return 16 + allocOverhead + strBytes(*p)
}

func timePtrBytes(p *time.Time) int64 {
	if p == nil {
		return 0
	}
	return timeBytes + allocOverhead
}

func vendorSize(v app.Vendor) int64 {
	n := strBytes(v.ID) + strBytes(v.Name) + strBytes(v.Description) + strBytes(v.Category) + strBytes(v.Status) +
		strBytes(v.InherentProbability) + strBytes(v.InherentImpact) + strBytes(v.Criticality) + strBytes(v.DPAStatus) +
		strPtrBytes(v.ResidualProbability) + strPtrBytes(v.ResidualImpact) + strPtrBytes(v.Website) + strPtrBytes(v.AssigneeID) +
		strPtrBytes(v.ContactEmail) + strPtrBytes(v.Country) + strPtrBytes(v.DPAURL) + strPtrBytes(v.NextReviewDue) +
		strPtrBytes(v.TransferMechanism) + timePtrBytes(v.DPASignedAt) + timePtrBytes(v.LastReviewedAt) + timePtrBytes(v.ArchivedAt)
	if v.RiskScore != nil {
		n += 8 + allocOverhead
	}
	if cap(v.SubProcessors) > 0 {
		n += int64(cap(v.SubProcessors))*subProcBytes + allocOverhead
	}
	for _, s := range v.SubProcessors {
		n += strBytes(s.Name) + strBytes(s.Country) + strBytes(s.Purpose)
	}
	return n
}

func findingSize(f app.Finding) int64 {
	n := strBytes(f.ID) + strBytes(f.Type) + strBytes(f.Status) + strBytes(f.Severity) + strBytes(f.Content) +
		strBytes(f.CreatedByType) + strBytes(f.CreatedByID) + strPtrBytes(f.FindingClass) + strPtrBytes(f.Title) +
		strPtrBytes(f.Description) + strPtrBytes(f.Source) + strPtrBytes(f.TaskID) + strPtrBytes(f.Scope) +
		strPtrBytes(f.TemplateID) + strPtrBytes(f.RevisionNote) + timePtrBytes(f.DueDate) + timePtrBytes(f.ClosedAt)
	if f.CVSS != nil {
		n += 8 + allocOverhead
	}
	if cap(f.LinkedControlIDs) > 0 {
		n += int64(cap(f.LinkedControlIDs))*16 + allocOverhead
	}
	for _, id := range f.LinkedControlIDs {
		n += strBytes(id)
	}
	return n
}

func evidenceSize(e app.Evidence) int64 {
	return strBytes(e.ID) + strBytes(e.ControlID) + strBytes(e.Filename) + strBytes(e.ContentType) + strBytes(e.SHA256) +
		strBytes(e.Description) + strBytes(e.UploadedBy) + strPtrBytes(e.TaskID) + timePtrBytes(e.ExpiresAt)
}

func personSize(p app.Person) int64 {
	n := strBytes(p.ID) + strBytes(p.Name) + strBytes(p.Email) + strBytes(string(p.Role)) + strBytes(p.Source.Type) +
		strPtrBytes(p.Source.ConnectionID) + timePtrBytes(p.TwoFactor.CheckedAt) + strPtrBytes(p.Department) + strPtrBytes(p.JobTitle) + timePtrBytes(p.LastLoginAt)
	if p.TwoFactor.Enrolled != nil {
		n += 1 + allocOverhead
	}
	if cap(p.Devices) > 0 {
		n += int64(cap(p.Devices))*deviceBytes + allocOverhead
	}
	for _, d := range p.Devices {
		n += strBytes(d.ID) + strBytes(d.Name) + strBytes(d.Hostname) + strBytes(d.Platform)
	}
	return n
}

// listSize estimates a list page: its items' array and what each holds.
func listSize[T any](base int64, item func(T) int64) func(app.List[T]) int64 {
	return func(l app.List[T]) int64 {
		n := entryBytes + int64(cap(l.Items))*base + allocOverhead
		for _, it := range l.Items {
			n += item(it)
		}
		return n
	}
}

// ptrSize estimates one record held by pointer.
func ptrSize[T any](base int64, item func(T) int64) func(*T) int64 {
	return func(p *T) int64 {
		if p == nil {
			return entryBytes
		}
		return entryBytes + base + allocOverhead + item(*p)
	}
}
