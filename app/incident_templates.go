package app

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ReportField is one piece of information a report carries, in the order
// the regulation (or, for DORA, the reporting templates) lists it.
type ReportField struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Basis is the provision that asks for the information.
	Basis     string `json:"basis"`
	Multiline bool   `json:"multiline"`
}

func fld(key, label, basis string, multi bool) ReportField {
	return ReportField{Key: key, Label: label, Basis: basis, Multiline: multi}
}

// DORA report fields follow the data field groups of the templates of
// Implementing Regulation (EU) 2025/302 and the content of Delegated
// Regulation (EU) 2025/301 Art. 1 to 4; the authority's own form decides
// the exact layout.
var doraEntityFields = []ReportField{
	fld("entityName", "Name of the financial entity", "RTS 2025/301 Art. 1; ITS 2025/302 Annex", false),
	fld("lei", "LEI of the financial entity", "ITS 2025/302 Annex", false),
	fld("entityType", "Type of financial entity", "ITS 2025/302 Annex", false),
	fld("contact", "Contact person (name, email, telephone)", "ITS 2025/302 Annex", false),
	fld("incidentReference", "Incident reference code given by the financial entity", "ITS 2025/302 Annex", false),
}

var reportTemplates = map[string][]ReportField{
	ReportKey(RegimeNIS2, ReportEarlyWarning): {
		fld("entityName", "Entity", "NIS2 Art. 23(4)", false),
		fld("contact", "Contact point", "NIS2 Art. 23(4)", false),
		fld("awareAt", "Became aware of the incident at (UTC)", "NIS2 Art. 23(4)(a)", false),
		fld("summary", "Short description of the significant incident", "NIS2 Art. 23(4)(a)", true),
		fld("suspectedMalicious", "Suspected of being caused by unlawful or malicious acts", "NIS2 Art. 23(4)(a)", false),
		fld("crossBorderImpact", "Could have a cross-border impact", "NIS2 Art. 23(4)(a)", true),
	},
	ReportKey(RegimeNIS2, ReportNotification): {
		fld("entityName", "Entity", "NIS2 Art. 23(4)", false),
		fld("contact", "Contact point", "NIS2 Art. 23(4)", false),
		fld("awareAt", "Became aware of the incident at (UTC)", "NIS2 Art. 23(4)(b)", false),
		fld("summary", "Description of the significant incident (update of the early warning)", "NIS2 Art. 23(4)(b)", true),
		fld("suspectedMalicious", "Suspected of being caused by unlawful or malicious acts", "NIS2 Art. 23(4)(a), (b)", false),
		fld("crossBorderImpact", "Cross-border impact", "NIS2 Art. 23(4)(a), (b)", true),
		fld("initialAssessment", "Initial assessment: severity and impact", "NIS2 Art. 23(4)(b)", true),
		fld("indicatorsOfCompromise", "Indicators of compromise, where available", "NIS2 Art. 23(4)(b)", true),
	},
	ReportKey(RegimeNIS2, ReportIntermediate): {
		fld("entityName", "Entity", "NIS2 Art. 23(4)", false),
		fld("requestReference", "Request of the CSIRT or competent authority", "NIS2 Art. 23(4)(c)", false),
		fld("statusUpdate", "Relevant status updates", "NIS2 Art. 23(4)(c)", true),
	},
	ReportKey(RegimeNIS2, ReportProgress): {
		fld("entityName", "Entity", "NIS2 Art. 23(4)", false),
		fld("currentStatus", "Current status of the incident", "NIS2 Art. 23(4)(e)", false),
		fld("progress", "Progress of the incident handling", "NIS2 Art. 23(4)(e)", true),
		fld("mitigation", "Applied and ongoing mitigation measures", "NIS2 Art. 23(4)(d)(iii)", true),
	},
	ReportKey(RegimeNIS2, ReportFinal): {
		fld("entityName", "Entity", "NIS2 Art. 23(4)", false),
		fld("detailedDescription", "Detailed description of the incident, including its severity and impact", "NIS2 Art. 23(4)(d)(i)", true),
		fld("rootCause", "Type of threat or root cause that is likely to have triggered the incident", "NIS2 Art. 23(4)(d)(ii)", true),
		fld("mitigation", "Applied and ongoing mitigation measures", "NIS2 Art. 23(4)(d)(iii)", true),
		fld("crossBorderImpact", "Cross-border impact of the incident, where applicable", "NIS2 Art. 23(4)(d)(iv)", true),
	},
	ReportKey(RegimeDORA, ReportInitial): append(append([]ReportField{}, doraEntityFields...),
		fld("detectedAt", "Date and time of detection of the incident (UTC)", "RTS 2025/301 Art. 1", false),
		fld("classifiedAt", "Date and time of classification of the incident (UTC)", "RTS 2025/301 Art. 1", false),
		fld("description", "Description of the incident", "RTS 2025/301 Art. 1", true),
		fld("classificationCriteria", "Classification criteria that triggered the major incident report", "RTS 2025/301 Art. 1; RTS 2024/1772", true),
		fld("memberStatesAffected", "Member states impacted", "RTS 2025/301 Art. 1", false),
		fld("discovery", "How the incident was discovered", "RTS 2025/301 Art. 1", true),
		fld("thirdPartyOrigin", "Originates from a third-party provider or another financial entity", "RTS 2025/301 Art. 1", true),
		fld("businessContinuity", "Activation of the business continuity plan", "RTS 2025/301 Art. 1", false),
		fld("otherInformation", "Other information", "RTS 2025/301 Art. 1", true),
	),
	ReportKey(RegimeDORA, ReportIntermediate): append(append([]ReportField{}, doraEntityFields...),
		fld("authorityReference", "Incident reference code given by the competent authority", "ITS 2025/302 Annex", false),
		fld("occurredAt", "Date and time of occurrence of the incident (UTC)", "RTS 2025/301 Art. 2", false),
		fld("restoredAt", "Date and time when services, activities or operations were restored (UTC)", "RTS 2025/301 Art. 2", false),
		fld("clientsAffected", "Number of clients affected", "RTS 2025/301 Art. 2; RTS 2024/1772 Art. 9(1)", false),
		fld("durationAndDowntime", "Duration of the incident and service downtime", "RTS 2025/301 Art. 2; RTS 2024/1772 Art. 9(3)", false),
		fld("economicImpact", "Economic impact (estimate)", "RTS 2025/301 Art. 2; RTS 2024/1772 Art. 9(6)", false),
		fld("incidentType", "Type of incident (cybersecurity, process failure, system failure, external event, payment-related, other)", "RTS 2025/301 Art. 2", false),
		fld("threatsAndTechniques", "Threats and techniques used by the threat actor", "RTS 2025/301 Art. 2", true),
		fld("affectedAreas", "Affected functional areas and business processes", "RTS 2025/301 Art. 2", true),
		fld("affectedInfrastructure", "Affected infrastructure components supporting business processes", "RTS 2025/301 Art. 2", true),
		fld("impactOnClients", "Impact on the financial interests of clients", "RTS 2025/301 Art. 2", true),
		fld("otherAuthorities", "Reporting to other authorities", "RTS 2025/301 Art. 2", true),
		fld("temporaryActions", "Temporary actions or measures taken or planned to recover", "RTS 2025/301 Art. 2", true),
		fld("indicatorsOfCompromise", "Indicators of compromise", "RTS 2025/301 Art. 2", true),
	),
	ReportKey(RegimeDORA, ReportFinal): append(append([]ReportField{}, doraEntityFields...),
		fld("authorityReference", "Incident reference code given by the competent authority", "ITS 2025/302 Annex", false),
		fld("rootCauseType", "Type of root cause", "RTS 2025/301 Art. 3", false),
		fld("rootCause", "Information about the root causes", "RTS 2025/301 Art. 3", true),
		fld("resolvedAt", "Date and time when the incident was resolved (UTC)", "RTS 2025/301 Art. 3", false),
		fld("resolution", "How the incident was resolved and the root cause addressed", "RTS 2025/301 Art. 3", true),
		fld("lessonsLearnt", "Lessons learnt and measures against recurrence", "RTS 2025/301 Art. 3", true),
		fld("economicImpact", "Economic impact: gross amount of costs and losses, amounts recovered", "RTS 2025/301 Art. 3; RTS 2024/1772 Art. 7", true),
		fld("recurring", "Recurring incident", "RTS 2025/301 Art. 3; RTS 2024/1772 Art. 8(2)", false),
		fld("otherInformation", "Other information", "RTS 2025/301 Art. 3", true),
	),
	ReportKey(RegimeGDPR, ReportNotification): {
		fld("controller", "Controller", "GDPR Art. 33", false),
		fld("dpoContact", "Name and contact details of the data protection officer or other contact point", "GDPR Art. 33(3)(b)", false),
		fld("awareAt", "Became aware of the breach at (UTC)", "GDPR Art. 33(1)", false),
		fld("natureOfBreach", "Nature of the personal data breach", "GDPR Art. 33(3)(a)", true),
		fld("dataSubjects", "Categories and approximate number of data subjects concerned", "GDPR Art. 33(3)(a)", true),
		fld("records", "Categories and approximate number of personal data records concerned", "GDPR Art. 33(3)(a)", true),
		fld("likelyConsequences", "Likely consequences of the personal data breach", "GDPR Art. 33(3)(c)", true),
		fld("measures", "Measures taken or proposed to address the breach, including to mitigate its possible adverse effects", "GDPR Art. 33(3)(d)", true),
		fld("reasonsForDelay", "Reasons for the delay (required when notified after 72 hours)", "GDPR Art. 33(1)", true),
	},
	ReportKey(RegimeGDPR, ReportCommunication): {
		fld("natureOfBreach", "What happened, in clear and plain language", "GDPR Art. 34(2)", true),
		fld("dpoContact", "Name and contact details of the data protection officer or other contact point", "GDPR Art. 34(2), 33(3)(b)", false),
		fld("likelyConsequences", "Likely consequences of the personal data breach", "GDPR Art. 34(2), 33(3)(c)", true),
		fld("measures", "Measures taken or proposed, including to mitigate possible adverse effects", "GDPR Art. 34(2), 33(3)(d)", true),
	},
	ReportKey(RegimeGDPR, ReportControllerNotice): {
		fld("processor", "Processor", "GDPR Art. 33(2)", false),
		fld("contact", "Contact point", "GDPR Art. 33(2)", false),
		fld("awareAt", "Became aware of the breach at (UTC)", "GDPR Art. 33(2)", false),
		fld("natureOfBreach", "Nature of the personal data breach", "GDPR Art. 33(2), 28(3)(f)", true),
		fld("dataSubjects", "Categories and approximate number of data subjects concerned", "GDPR Art. 33(3)(a)", true),
		fld("records", "Categories and approximate number of personal data records concerned", "GDPR Art. 33(3)(a)", true),
		fld("measures", "Measures taken or proposed", "GDPR Art. 33(3)(d)", true),
	},
	ReportKey(RegimeCRA, ReportEarlyWarning): {
		fld("manufacturer", "Manufacturer", "CRA Art. 14", false),
		fld("product", "Product with digital elements concerned", "CRA Art. 14", false),
		fld("summary", "Short description", "CRA Art. 14(2)(a), 14(4)(a)", true),
		fld("suspectedMalicious", "Suspected of being caused by unlawful or malicious acts (severe incidents)", "CRA Art. 14(4)(a)", false),
		fld("memberStates", "Member states where the product has been made available, where known", "CRA Art. 14(2)(a), 14(4)(a)", false),
	},
	ReportKey(RegimeCRA, ReportNotification): {
		fld("manufacturer", "Manufacturer", "CRA Art. 14", false),
		fld("product", "Product with digital elements concerned", "CRA Art. 14(2)(b), 14(4)(b)", false),
		fld("generalNature", "General nature of the exploit and the vulnerability, or of the incident", "CRA Art. 14(2)(b), 14(4)(b)", true),
		fld("initialAssessment", "Initial assessment of the incident (severe incidents)", "CRA Art. 14(4)(b)", true),
		fld("correctiveMeasures", "Corrective or mitigating measures taken, and those users can take", "CRA Art. 14(2)(b), 14(4)(b)", true),
		fld("sensitivity", "How sensitive the manufacturer considers the notified information", "CRA Art. 14(2)(b), 14(4)(b)", false),
	},
}

// craFinal holds the two final reports of CRA Art. 14: for an actively
// exploited vulnerability (14(2)(c)) and for a severe incident (14(4)(c)).
var craFinal = map[bool][]ReportField{
	true: {
		fld("manufacturer", "Manufacturer", "CRA Art. 14", false),
		fld("product", "Product with digital elements concerned", "CRA Art. 14(2)(c)", false),
		fld("vulnerabilityDescription", "Description of the vulnerability, including its severity and impact", "CRA Art. 14(2)(c)(i)", true),
		fld("maliciousActor", "Information on any malicious actor that exploited or exploits the vulnerability, where available", "CRA Art. 14(2)(c)(ii)", true),
		fld("securityUpdate", "Details of the security update or other corrective measures made available", "CRA Art. 14(2)(c)(iii)", true),
	},
	false: {
		fld("manufacturer", "Manufacturer", "CRA Art. 14", false),
		fld("product", "Product with digital elements concerned", "CRA Art. 14(4)(c)", false),
		fld("detailedDescription", "Detailed description of the incident, including its severity and impact", "CRA Art. 14(4)(c)(i)", true),
		fld("rootCause", "Type of threat or root cause that is likely to have triggered the incident", "CRA Art. 14(4)(c)(ii)", true),
		fld("mitigation", "Applied and ongoing mitigation measures", "CRA Art. 14(4)(c)(iii)", true),
	},
}

// ReportFields returns the structure of a report.
func ReportFields(regime, kind string, inc *Incident) []ReportField {
	if regime == RegimeCRA && kind == ReportFinal {
		vuln := inc.Type == IncidentVulnerability || (inc.Facts.ActivelyExploited != nil && *inc.Facts.ActivelyExploited)
		return craFinal[vuln]
	}
	return reportTemplates[ReportKey(regime, kind)]
}

func yesNoUnknown(b *bool) string {
	switch {
	case b == nil:
		return "Not yet known"
	case *b:
		return "Yes"
	}
	return "No"
}

func utc(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func count(n *int64) string {
	if n == nil {
		return "not yet known"
	}
	return strconv.FormatInt(*n, 10)
}

// DraftReport fills a report's fields from the incident record and the
// profile. Everything is editable before sending; fields the record does
// not answer stay empty.
func DraftReport(inc *Incident, prof *IncidentProfile, orgName string, r *IncidentReport) map[string]string {
	if prof == nil {
		prof = &IncidentProfile{}
	}
	f := inc.Facts
	entity := orgName
	if prof.LegalName != nil {
		entity = *prof.LegalName
	}
	var contact []string
	for _, s := range []*string{prof.ContactName, prof.ContactEmail, prof.ContactPhone} {
		if s != nil {
			contact = append(contact, *s)
		}
	}
	summary := inc.Title
	if inc.Description != "" {
		summary += "\n\n" + inc.Description
	}
	cross := "No cross-border impact recorded."
	if inc.CrossBorder {
		cross = "Yes"
		if len(inc.Countries) > 0 {
			cross += ": " + strings.Join(inc.Countries, ", ")
		}
	} else if len(inc.Countries) > 1 {
		cross = "Countries affected: " + strings.Join(inc.Countries, ", ")
	}
	assessment := "Severity: " + inc.Severity + "."
	if len(inc.AffectedServices) > 0 {
		assessment += " Affected services: " + strings.Join(inc.AffectedServices, ", ") + "."
	}
	if len(inc.AffectedSystems) > 0 {
		assessment += " Affected systems: " + strings.Join(inc.AffectedSystems, ", ") + "."
	}
	if f.Impact != nil {
		assessment += " " + *f.Impact
	}
	subjects := "Approximate number: " + count(inc.DataSubjectsAffected) + "."
	records := "Approximate number: " + count(inc.RecordsAffected) + "."
	if len(inc.DataCategories) > 0 {
		records = "Categories: " + strings.Join(inc.DataCategories, ", ") + ". " + records
	}
	product := sp(f.ProductName)
	statusText := map[string]string{IncidentOpen: "Ongoing (open)", IncidentContained: "Contained, not yet resolved",
		IncidentResolved: "Resolved", IncidentClosed: "Closed"}[inc.Status]
	measures := sp(f.MitigationMeasures)
	v := map[string]string{
		"entityName": entity, "controller": entity, "processor": entity, "manufacturer": entity,
		"contact": strings.Join(contact, ", "), "dpoContact": sp(prof.DPOContact),
		"awareAt": utc(&inc.AwareAt), "detectedAt": utc(&inc.DetectedAt), "occurredAt": utc(inc.OccurredAt), "restoredAt": utc(inc.ResolvedAt),
		"resolvedAt": utc(inc.ResolvedAt), "summary": summary, "description": summary, "detailedDescription": summary + "\n\n" + assessment,
		"suspectedMalicious": yesNoUnknown(f.SuspectedMalicious), "crossBorderImpact": cross, "initialAssessment": assessment,
		"indicatorsOfCompromise": sp(f.IndicatorsOfCompromise), "rootCause": sp(f.RootCause), "mitigation": measures, "measures": measures,
		"temporaryActions": measures, "correctiveMeasures": measures, "securityUpdate": measures, "resolution": measures,
		"currentStatus": statusText, "natureOfBreach": summary, "dataSubjects": subjects, "records": records,
		"likelyConsequences": sp(f.Impact), "impactOnClients": sp(f.Impact), "product": product, "lei": sp(prof.LEI),
		"entityType": sp(prof.FinancialEntityType), "incidentReference": inc.ID, "memberStates": strings.Join(inc.Countries, ", "),
		"memberStatesAffected": strings.Join(inc.Countries, ", "), "affectedAreas": strings.Join(inc.AffectedServices, ", "),
		"affectedInfrastructure": strings.Join(inc.AffectedSystems, ", "), "clientsAffected": count(inc.ClientsAffected),
		"vulnerabilityDescription": summary + "\n\n" + assessment, "generalNature": summary,
	}
	if inc.Type == IncidentSecurity {
		v["incidentType"] = "Cybersecurity-related"
	}
	if c := inc.DORAClassification; c != nil {
		v["classifiedAt"] = utc(c.MajorSince)
		var met []string
		for _, cr := range c.Criteria {
			if cr.Result == criterionMet {
				met = append(met, cr.Label+" ("+cr.Basis+"): "+cr.Detail)
			}
		}
		v["classificationCriteria"] = strings.Join(met, "\n")
		if len(c.Input.MemberStatesAffected) > 0 {
			v["memberStatesAffected"] = strings.Join(c.Input.MemberStatesAffected, ", ")
		}
		if c.Input.ClientsAffected != nil {
			v["clientsAffected"] = strconv.FormatInt(*c.Input.ClientsAffected, 10)
		}
		if c.Input.EconomicImpactEUR != nil {
			v["economicImpact"] = fmt.Sprintf("EUR %.2f", *c.Input.EconomicImpactEUR)
		}
		var dd []string
		if c.Input.DurationHours != nil {
			dd = append(dd, fmt.Sprintf("duration %.1f h", *c.Input.DurationHours))
		}
		if c.Input.DowntimeHours != nil {
			dd = append(dd, fmt.Sprintf("service downtime %.1f h", *c.Input.DowntimeHours))
		}
		v["durationAndDowntime"] = strings.Join(dd, ", ")
	}
	if r.Regime == RegimeNIS2 && r.Kind == ReportIntermediate && f.IntermediateRequestedAt != nil {
		v["requestReference"] = "Requested " + utc(f.IntermediateRequestedAt)
		if f.IntermediateDueAt != nil {
			v["requestReference"] += ", due " + utc(f.IntermediateDueAt)
		}
	}
	if len(inc.LinkedVendorIDs) > 0 {
		v["thirdPartyOrigin"] = "Linked third-party providers: " + strings.Join(inc.LinkedVendorIDs, ", ")
	}
	out := map[string]string{}
	for _, fl := range ReportFields(r.Regime, r.Kind, inc) {
		out[fl.Key] = strings.TrimSpace(v[fl.Key])
	}
	return out
}
