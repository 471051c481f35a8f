package web

import "github.com/compliance-appliance/compliance/app"

// questionnaireRoutes registers the knowledge base, questionnaires, the
// trust portal and trust access, including their public pages.
func (s *Server) questionnaireRoutes(handle func(method, path string, acc access, h handlerFunc)) {
	handle("GET", "/v1/knowledge-base/entries", canRead, s.listKBEntries)
	handle("POST", "/v1/knowledge-base/entries", canManage, s.createKBEntry)
	handle("POST", "/v1/knowledge-base/entries/import", canManage, s.importKBEntries)
	handle("GET", "/v1/knowledge-base/entries/{id}", canRead, s.getKBEntry)
	handle("PATCH", "/v1/knowledge-base/entries/{id}", canManage, s.updateKBEntry)
	handle("DELETE", "/v1/knowledge-base/entries/{id}", canManage, s.deleteKBEntry)
	handle("GET", "/v1/knowledge-base/search", canRead, s.searchKB)

	handle("GET", "/v1/questionnaire", canRead, s.listQuestionnaires)
	handle("POST", "/v1/questionnaire", canManage, s.createQuestionnaire)
	handle("POST", "/v1/questionnaire/upload", canManage, s.uploadQuestionnaire)
	handle("GET", "/v1/questionnaire/templates", canRead, s.listQuestionnaireTemplates)
	handle("GET", "/v1/questionnaire/{id}", canRead, s.getQuestionnaire)
	handle("DELETE", "/v1/questionnaire/{id}", canManage, s.deleteQuestionnaire)
	handle("POST", "/v1/questionnaire/{id}/send", canManage, s.sendQuestionnaire)
	handle("POST", "/v1/questionnaire/{id}/fill", canManage, s.fillQuestionnaire)
	handle("POST", "/v1/questionnaire/{id}/auto-answer", canManage, s.autoAnswerQuestionnaire)
	handle("GET", "/v1/questionnaire/{id}/export", canRead, s.exportQuestionnaire)
	handle("GET", "/v1/vendor-questionnaire/{token}", public, s.getLinkQuestionnaire)
	handle("POST", "/v1/vendor-questionnaire/{token}", public, s.fillLinkQuestionnaire)
	handle("GET", "/vendor-questionnaire/{token}", public, s.vendorFillPage)
	handle("POST", "/vendor-questionnaire/{token}", public, s.vendorFillSubmit)

	handle("GET", "/v1/trust-portal/settings", canRead, s.getTrustSettings)
	handle("PATCH", "/v1/trust-portal/settings", canManage, s.updateTrustSettings)
	handle("GET", "/v1/trust-portal/documents", canRead, s.listTrustDocuments)
	handle("POST", "/v1/trust-portal/documents", canManage, s.createTrustDocument)
	handle("GET", "/v1/trust-portal/documents/{id}", canRead, s.getTrustDocument)
	handle("PATCH", "/v1/trust-portal/documents/{id}", canManage, s.updateTrustDocument)
	handle("DELETE", "/v1/trust-portal/documents/{id}", canManage, s.deleteTrustDocument)
	handle("GET", "/v1/trust-portal/documents/{id}/download", canRead, s.downloadTrustDocument)
	handle("GET", "/v1/trust-portal/nda-signatories", canRead, s.listNDASignatures)

	handle("GET", "/v1/trust-access/admin/requests", canRead, s.listTrustRequests)
	handle("GET", "/v1/trust-access/admin/requests/{id}", canRead, s.getTrustRequest)
	handle("POST", "/v1/trust-access/admin/requests/{id}/approve", canManage, s.decideTrustRequest(app.DecisionApprove))
	handle("POST", "/v1/trust-access/admin/requests/{id}/deny", canManage, s.decideTrustRequest(app.DecisionDeny))
	handle("POST", "/v1/trust-access/admin/requests/{id}/revoke", canManage, s.decideTrustRequest(app.DecisionRevoke))
	handle("GET", "/v1/trust-access/admin/downloads", canRead, s.listTrustDownloads)

	handle("GET", "/v1/trust/{slug}", public, s.getPublicPortal)
	handle("GET", "/v1/trust/{slug}/documents/{documentId}", public, s.downloadPublicDocument)
	handle("POST", "/v1/trust-access/{slug}/requests", public, s.createAccessRequest)
	handle("GET", "/v1/trust-access/nda/{token}", public, s.getNDA)
	handle("POST", "/v1/trust-access/nda/{token}/sign", public, s.signNDA)
	handle("GET", "/v1/trust-access/access/{token}/documents", public, s.listGrantedDocuments)
	handle("GET", "/v1/trust-access/access/{token}/documents/{documentId}", public, s.downloadGrantedDocument)
	handle("GET", "/trust/{slug}", public, s.trustPage)
	handle("POST", "/trust/{slug}/request", public, s.trustRequestForm)
	handle("GET", "/trust/{slug}/access/{token}", public, s.trustAccessPage)
	handle("POST", "/trust/{slug}/access/{token}/nda", public, s.trustNDAForm)
}
