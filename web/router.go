package web

import (
	"net/http"

	"github.com/gorilla/mux"
)

// routes registers every route. The OpenAPI contract test walks this router.
func (s *Server) routes() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = s.wrap(public, func(w http.ResponseWriter, r *http.Request) error { return errNotFoundRoute })
	r.MethodNotAllowedHandler = s.wrap(public, s.methodNotAllowed)

	handle := func(method, path string, acc access, h handlerFunc) {
		r.Handle(path, s.wrap(acc, h)).Methods(method)
	}

	r.HandleFunc("/v1/health", s.health).Methods(http.MethodGet)
	handle("GET", "/v1/openapi.json", public, s.getOpenAPI)

	handle("GET", "/v1/organization", canRead, s.getOrganization)
	handle("PATCH", "/v1/organization", canManage, s.updateOrganization)
	handle("GET", "/v1/organization/branding", canRead, s.getBranding)
	handle("PATCH", "/v1/organization/branding", canManage, s.updateBranding)
	handle("POST", "/v1/organization/transfer-ownership", canOwn, s.transferOwnership)

	handle("GET", "/v1/people", canRead, s.listPeople)
	handle("POST", "/v1/people", canManage, s.createPerson)
	handle("POST", "/v1/people/bulk", canManage, s.bulkCreatePeople)
	handle("GET", "/v1/people/{id}", canRead, s.getPerson)
	handle("PATCH", "/v1/people/{id}", canManage, s.updatePerson)
	handle("POST", "/v1/people/{id}/devices", canManage, s.linkDevice)
	handle("DELETE", "/v1/people/{id}/devices/{deviceId}", canManage, s.unlinkDevice)

	handle("GET", "/v1/devices", canRead, s.listDevices)
	handle("GET", "/v1/devices/{id}", canRead, s.getDevice)

	handle("GET", "/v1/api-keys", canKeys, s.listAPIKeys)
	handle("POST", "/v1/api-keys", canKeys, s.createAPIKey)
	handle("DELETE", "/v1/api-keys/{id}", canKeys, s.revokeAPIKey)

	handle("GET", "/v1/vendors", canRead, s.listVendors)
	handle("POST", "/v1/vendors", canManage, s.createVendor)
	handle("GET", "/v1/vendors/{id}", canRead, s.getVendor)
	handle("PATCH", "/v1/vendors/{id}", canManage, s.updateVendor)
	handle("DELETE", "/v1/vendors/{id}", canManage, s.deleteVendor)
	handle("POST", "/v1/vendors/{id}/archive", canManage, s.archiveVendor)
	handle("POST", "/v1/vendors/{id}/restore", canManage, s.restoreVendor)
	s.complianceRoutes(handle)
	s.policyRoutes(handle)
	s.registersRoutes(handle)
	s.eventsRoutes(handle)
	s.authRoutes(handle)
	s.questionnaireRoutes(handle)
	s.mountUI(r)
	return r
}
