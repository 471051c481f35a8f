package api

import (
	"net/http"

	"github.com/compliance-appliance/compliance/web/httpx"
)

// routeFunc registers one route: method, path template, who may call it
// and the handler.
type routeFunc = func(method, path string, acc httpx.Access, h httpx.HandlerFunc)

// routes registers every REST route, file by file; each resource file
// lists its routes at its top. The OpenAPI contract test walks the router
// they land on. Within a file the order is the match order (a literal
// segment before a {parameter} in the same place).
func (s *Server) routes() {
	s.Router().HandleFunc("/v1/health", s.health).Methods(http.MethodGet)
	s.healthRoutes(s.Handle)
	s.organizationRoutes(s.Handle)
	s.onboardingRoutes(s.Handle)
	s.peopleRoutes(s.Handle)
	s.vendorRoutes(s.Handle)
	s.frameworkRoutes(s.Handle)
	s.controlRoutes(s.Handle)
	s.soaRoutes(s.Handle)
	s.policyRoutes(s.Handle)
	s.variableRoutes(s.Handle)
	s.contextRoutes(s.Handle)
	s.registersRoutes(s.Handle)
	s.incidentRoutes(s.Handle)
	s.eventsRoutes(s.Handle)
	s.authRoutes(s.Handle)
	s.oauthAppsRoutes(s.Handle)
	s.knowledgeRoutes(s.Handle)
	s.questionnaireRoutes(s.Handle)
	s.trustRoutes(s.Handle)
	s.searchRoutes(s.Handle)
	s.notificationRoutes(s.Handle)
	s.pentestRoutes(s.Handle)
	s.pentestOSVRoutes(s.Handle)
	s.assistantRoutes(s.Handle)
	s.integrationRoutes(s.Handle)
	s.cloudSecurityRoutes(s.Handle)
	s.trainingRoutes(s.Handle)
	s.deviceAgentRoutes(s.Handle)
	s.taskAutomationRoutes(s.Handle)
	s.syncRoutes(s.Handle)
	s.syncRoleRoutes(s.Handle)
	s.ssoRoutes(s.Handle)
	s.scimRoutes(s.Handle)
	s.browserRoutes(s.Handle)
	s.integrationTaskRoutes(s.Handle)
	s.integrationAdminRoutes(s.Handle)
	s.mailSettingsRoutes(s.Handle)
	s.integrationOAuthRoutes(s.Handle)
	s.vendorAssessmentRoutes(s.Handle)
	s.evidenceExportRoutes(s.Handle)
}
