package web

// policyRoutes registers policies, organization variables and the
// organization's context.
func (s *Server) policyRoutes(handle func(method, path string, acc access, h handlerFunc)) {
	handle("GET", "/v1/policies", canRead, s.listPolicies)
	handle("POST", "/v1/policies", canManage, s.createPolicy)
	handle("GET", "/v1/policies/{id}", canRead, s.getPolicy)
	handle("PATCH", "/v1/policies/{id}", canManage, s.updatePolicy)
	handle("DELETE", "/v1/policies/{id}", canManage, s.deletePolicy)
	handle("GET", "/v1/policies/{id}/preview", canRead, s.previewPolicy)
	handle("POST", "/v1/policies/{id}/publish", canManage, s.publishPolicy)
	handle("GET", "/v1/policies/{id}/versions", canRead, s.listPolicyVersions)
	handle("GET", "/v1/policies/{id}/versions/{versionId}", canRead, s.getPolicyVersion)
	handle("POST", "/v1/policies/{id}/acknowledge", canSelf, s.acknowledgePolicy)
	handle("GET", "/v1/policies/{id}/acknowledgements", canRead, s.policyAcknowledgements)
	handle("GET", "/v1/policies/{id}/controls", canRead, s.listPolicyControls)
	handle("POST", "/v1/policies/{id}/controls", canManage, s.linkPolicyControls)
	handle("DELETE", "/v1/policies/{id}/controls/{controlId}", canManage, s.unlinkPolicyControl)

	handle("GET", "/v1/variables", canRead, s.listVariables)
	handle("POST", "/v1/variables", canManage, s.createVariable)
	handle("GET", "/v1/variables/{id}", canRead, s.getVariable)
	handle("PATCH", "/v1/variables/{id}", canManage, s.updateVariable)
	handle("DELETE", "/v1/variables/{id}", canManage, s.deleteVariable)

	handle("GET", "/v1/context", canRead, s.getContext)
	handle("PATCH", "/v1/context", canManage, s.updateContext)
	handle("GET", "/v1/context/snapshots", canRead, s.listContextSnapshots)
	handle("GET", "/v1/context/snapshots/{id}", canRead, s.getContextSnapshot)
	handle("POST", "/v1/context/snapshots/{id}/restore", canManage, s.restoreContextSnapshot)
}
