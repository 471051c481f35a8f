package web

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
	handle("GET", "/vendor-questionnaire/{token}", public, s.vendorFillPage)
	handle("POST", "/vendor-questionnaire/{token}", public, s.vendorFillSubmit)
}
