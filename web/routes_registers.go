package web

// registersRoutes registers risks, findings with their corrective actions,
// finding templates, comments, attachments and CSRD data points.
func (s *Server) registersRoutes(handle func(method, path string, acc access, h handlerFunc)) {
	handle("GET", "/v1/risks", canRead, s.listRisks)
	handle("POST", "/v1/risks", canManage, s.createRisk)
	handle("GET", "/v1/risks/{id}", canRead, s.getRisk)
	handle("PATCH", "/v1/risks/{id}", canManage, s.updateRisk)
	handle("POST", "/v1/risks/{id}/archive", canManage, s.archiveRisk)
	handle("POST", "/v1/risks/{id}/restore", canManage, s.restoreRisk)

	handle("GET", "/v1/findings", canRead, s.listFindings)
	handle("POST", "/v1/findings", canReview, s.createFinding)
	handle("GET", "/v1/findings/{id}", canRead, s.getFinding)
	handle("PATCH", "/v1/findings/{id}", canReview, s.updateFinding)
	handle("POST", "/v1/findings/{id}/close", canReview, s.closeFinding)
	handle("GET", "/v1/findings/{id}/corrective-actions", canRead, s.listCorrectiveActions)
	handle("POST", "/v1/findings/{id}/corrective-actions", canManage, s.createCorrectiveAction)
	handle("GET", "/v1/findings/{id}/corrective-actions/{actionId}", canRead, s.getCorrectiveAction)
	// The service allows the action's owner as well as owners and admins.
	handle("PATCH", "/v1/findings/{id}/corrective-actions/{actionId}", canRead, s.updateCorrectiveAction)

	handle("GET", "/v1/finding-template", canRead, s.listFindingTemplates)
	handle("POST", "/v1/finding-template", canManage, s.createFindingTemplate)
	handle("GET", "/v1/finding-template/{id}", canRead, s.getFindingTemplate)
	handle("PATCH", "/v1/finding-template/{id}", canManage, s.updateFindingTemplate)
	handle("DELETE", "/v1/finding-template/{id}", canManage, s.deleteFindingTemplate)

	handle("GET", "/v1/comments", canRead, s.listComments)
	handle("POST", "/v1/comments", canReview, s.createComment)
	handle("GET", "/v1/comments/{id}", canRead, s.getComment)
	handle("PATCH", "/v1/comments/{id}", canReview, s.updateComment)
	handle("PUT", "/v1/comments/{id}", canReview, s.updateComment)
	handle("DELETE", "/v1/comments/{id}", canReview, s.deleteComment)

	handle("GET", "/v1/attachments", canRead, s.listAttachments)
	handle("POST", "/v1/attachments", canReview, s.createAttachment)
	handle("GET", "/v1/attachments/{id}", canRead, s.getAttachment)
	handle("GET", "/v1/attachments/{id}/download", canRead, s.downloadAttachment)

	handle("GET", "/v1/csrd/data-points", canRead, s.listESGDataPoints)
	handle("POST", "/v1/csrd/data-points", canManage, s.createESGDataPoint)
	handle("GET", "/v1/csrd/data-points/{id}", canRead, s.getESGDataPoint)
	handle("PATCH", "/v1/csrd/data-points/{id}", canManage, s.updateESGDataPoint)
}
