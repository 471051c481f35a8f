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
}
