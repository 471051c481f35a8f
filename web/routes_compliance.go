package web

// complianceRoutes registers frameworks, requirements, task templates,
// controls, evidence, evidence export, tasks and the Statement of
// Applicability.
func (s *Server) complianceRoutes(handle func(method, path string, acc access, h handlerFunc)) {
	handle("GET", "/v1/frameworks", canRead, s.listFrameworks)
	handle("POST", "/v1/frameworks", canManage, s.createFramework)
	handle("GET", "/v1/frameworks/{frameworkId}", canRead, s.getFramework)
	handle("PATCH", "/v1/frameworks/{frameworkId}", canManage, s.updateFramework)
	handle("POST", "/v1/frameworks/{frameworkId}/enable", canManage, s.enableFramework)
	handle("GET", "/v1/frameworks/{frameworkId}/requirements", canRead, s.listRequirements)
	handle("POST", "/v1/frameworks/{frameworkId}/requirements", canManage, s.addRequirement)
	handle("GET", "/v1/frameworks/{frameworkId}/requirements/{requirementId}", canRead, s.getRequirement)
	handle("POST", "/v1/frameworks/{frameworkId}/requirements/{requirementId}/controls", canManage, s.mapRequirementControls)

	handle("GET", "/v1/framework-editor/task-template", canRead, s.listTaskTemplates)
	handle("POST", "/v1/framework-editor/task-template", canManage, s.createTaskTemplate)
	handle("GET", "/v1/framework-editor/task-template/{id}", canRead, s.getTaskTemplate)
	handle("PATCH", "/v1/framework-editor/task-template/{id}", canManage, s.updateTaskTemplate)
	handle("DELETE", "/v1/framework-editor/task-template/{id}", canManage, s.deleteTaskTemplate)

	handle("GET", "/v1/controls", canRead, s.listControls)
	handle("POST", "/v1/controls", canManage, s.createControl)
	handle("GET", "/v1/controls/{controlId}", canRead, s.getControl)
	handle("PATCH", "/v1/controls/{controlId}", canManage, s.updateControl)
	handle("POST", "/v1/controls/{controlId}/evidence", canManage, s.uploadControlEvidence)
	handle("GET", "/v1/controls/{controlId}/evidence", canRead, s.listControlEvidence)

	handle("GET", "/v1/evidence/{evidenceId}", canRead, s.getEvidence)
	handle("GET", "/v1/evidence/{evidenceId}/download", canRead, s.downloadEvidence)
	handle("DELETE", "/v1/evidence/{evidenceId}", canManage, s.deleteEvidence)
	handle("GET", "/v1/evidence-export", canManage, s.exportEvidence)
	handle("GET", "/v1/evidence-export/auditor", canRead, s.exportEvidenceAuditor)

	handle("GET", "/v1/tasks", canRead, s.listTasks)
	handle("POST", "/v1/tasks", canManage, s.createTask)
	handle("PATCH", "/v1/tasks/bulk", canManage, s.bulkTaskStatus)
	handle("PATCH", "/v1/tasks/bulk/assignee", canManage, s.bulkTaskAssignee)
	handle("POST", "/v1/tasks/reassign", canManage, s.reassignTasks)
	handle("GET", "/v1/tasks/{taskId}", canRead, s.getTask)
	handle("PATCH", "/v1/tasks/{taskId}", canSelf, s.updateTask)
	handle("DELETE", "/v1/tasks/{taskId}", canManage, s.deleteTask)
	handle("POST", "/v1/tasks/{taskId}/complete", canSelf, s.completeTask)
	handle("POST", "/v1/tasks/{taskId}/evidence", canSelf, s.attachTaskEvidence)
	handle("GET", "/v1/tasks/{taskId}/evidence", canRead, s.listTaskEvidence)

	handle("GET", "/v1/soa", canRead, s.listSOA)
	handle("GET", "/v1/soa/export", canRead, s.exportSOA)
	handle("GET", "/v1/soa/{requirementId}", canRead, s.getSOAEntry)
	handle("PATCH", "/v1/soa/{requirementId}", canManage, s.updateSOAEntry)
}
