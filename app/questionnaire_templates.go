package app

// QuestionnaireTemplate is a built-in set of questions to send to vendors.
type QuestionnaireTemplate struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Questions   []TemplateQuestion `json:"questions"`
}

// TemplateQuestion is one question of a template.
type TemplateQuestion struct {
	Section  string `json:"section"`
	Question string `json:"question"`
}

var templates = []QuestionnaireTemplate{
	{
		ID:          "vendor-security-baseline",
		Name:        "Vendor security baseline",
		Description: "Core information-security questions for any vendor that handles company data.",
		Questions: []TemplateQuestion{
			{"Governance", "Do you maintain an information security policy approved by management and reviewed at least yearly?"},
			{"Governance", "Who is accountable for information security in your organization (name and role)?"},
			{"Governance", "Which security certifications or attestations do you hold (for example ISO 27001, SOC 2)? Please attach current reports."},
			{"People", "Do employees and contractors complete security awareness training at onboarding and at least yearly?"},
			{"People", "Do you perform background checks on personnel with access to customer data, where the law allows?"},
			{"Access control", "Is multi-factor authentication enforced for all access to production systems and customer data?"},
			{"Access control", "How often are user access rights reviewed, and how quickly is access removed when someone leaves?"},
			{"Access control", "Do you use single sign-on and a central identity provider for workforce accounts?"},
			{"Data protection", "Is customer data encrypted at rest? Name the algorithms and key lengths."},
			{"Data protection", "Is customer data encrypted in transit with TLS 1.2 or later?"},
			{"Data protection", "How are encryption keys managed and rotated?"},
			{"Data protection", "In which countries is customer data stored and processed?"},
			{"Data protection", "Do you use sub-processors? Please list them with their location and purpose."},
			{"Operations", "Do you run vulnerability scans and apply security patches within defined time frames?"},
			{"Operations", "Are independent penetration tests performed at least yearly, and are findings remediated?"},
			{"Operations", "Do you log security-relevant events centrally and monitor them for alerts?"},
			{"Operations", "Is malware protection or endpoint detection deployed on all workstations and servers?"},
			{"Development", "Do you follow a secure development lifecycle, including code review and dependency scanning?"},
			{"Resilience", "Are backups taken regularly, encrypted, stored off-site and tested by restoring them?"},
			{"Resilience", "Do you have a business continuity and disaster recovery plan, and when was it last tested?"},
			{"Resilience", "What are your recovery time and recovery point objectives for the service you provide to us?"},
			{"Incident response", "Do you have a documented incident response plan with defined roles?"},
			{"Incident response", "How quickly will you notify us of a security incident affecting our data?"},
			{"Incident response", "Have you had a security breach in the last 24 months? If so, describe it and the actions taken."},
		},
	},
	{
		ID:          "gdpr-processor",
		Name:        "GDPR processor assessment",
		Description: "Questions for a vendor that processes personal data on the organization's behalf (GDPR Art. 28).",
		Questions: []TemplateQuestion{
			{"Contract", "Will you sign a data processing agreement that meets the requirements of GDPR Article 28?"},
			{"Contract", "Do you process personal data only on our documented instructions?"},
			{"Transfers", "Is personal data transferred outside the EU/EEA? If so, which transfer mechanism applies (adequacy decision, standard contractual clauses)?"},
			{"Transfers", "List every sub-processor that will process our personal data, with country and purpose."},
			{"Transfers", "Will you inform us in advance of new or replaced sub-processors and give us the opportunity to object?"},
			{"Data subjects", "How do you help us answer data subject requests (access, rectification, erasure, portability)?"},
			{"Security", "Which technical and organizational measures protect the personal data (GDPR Article 32)?"},
			{"Security", "Are personnel who process personal data bound by confidentiality?"},
			{"Breaches", "Within how many hours will you notify us of a personal data breach?"},
			{"Retention", "How is personal data deleted or returned at the end of the contract, and how do you confirm it?"},
			{"Accountability", "Have you appointed a data protection officer? Give their contact details."},
			{"Accountability", "Do you keep a record of processing activities for the processing you do for us?"},
			{"Accountability", "Will you allow and contribute to audits and inspections by us or an auditor we mandate?"},
		},
	},
}

// QuestionnaireTemplates lists the built-in templates.
func (a *App) QuestionnaireTemplates() []QuestionnaireTemplate { return templates }

func findTemplate(id string) *QuestionnaireTemplate {
	for i := range templates {
		if templates[i].ID == id {
			return &templates[i]
		}
	}
	return nil
}
