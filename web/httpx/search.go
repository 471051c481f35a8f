package httpx

import (
	"net/url"

	"github.com/compliance-appliance/compliance/app"
)

// SearchHitPaths are where a search hit is read through the API and where
// it opens in the web application; both surfaces link hits the same way.
func SearchHitPaths(h app.SearchHit) (apiPath, webPath string) {
	id := url.PathEscape(h.ID)
	switch h.Type {
	case app.SearchVendor:
		return "/v1/vendors/" + id, "/vendors/" + id
	case app.SearchControl:
		return "/v1/controls/" + id, "/controls/" + id
	case app.SearchRequirement:
		fw := url.PathEscape(h.ParentID)
		return "/v1/frameworks/" + fw + "/requirements/" + id, "/frameworks/" + fw + "/requirements/" + id
	case app.SearchPolicy:
		return "/v1/policies/" + id, "/policies/" + id
	case app.SearchRisk:
		return "/v1/risks/" + id, "/risks/" + id
	case app.SearchFinding:
		return "/v1/findings/" + id, "/findings/" + id
	case app.SearchPerson:
		return "/v1/people/" + id, "/people/" + id
	case app.SearchKB:
		// Entries have no page of their own: the knowledge base's search
		// for the question shows it.
		return "/v1/knowledge-base/entries/" + id, "/knowledge-base?q=" + url.QueryEscape(h.Title.String())
	case app.SearchQuestionnaire:
		return "/v1/questionnaire/" + id, "/questionnaires/" + id
	}
	return "", ""
}
