package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/compliance-appliance/compliance/integrations/internal/checkrun"
	"github.com/compliance-appliance/compliance/integrations/internal/restapi"
)

var repoChecks = []string{CheckBranchProtection, CheckRequiredReviews, CheckSecretScanning, CheckDependabotAlerts, CheckOutsideCollaborators}

func repoResource(rp repository) checkrun.Resource {
	return checkrun.Resource{Type: "repository", ID: strconv.FormatInt(rp.ID, 10), Name: rp.FullName}
}

func (r *run) repoPath(rp repository, rest string) string {
	name := rp.FullName
	owner, repo, ok := strings.Cut(name, "/")
	if !ok {
		owner, repo = r.cfg.org, rp.Name
	}
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + rest
}

// listRepos lists the organization's repositories the connection covers.
func (r *run) listRepos(ctx context.Context) ([]repository, error) {
	var repos []repository
	archived := 0
	found := map[string]bool{}
	res, err := restapi.List(ctx, r.api, r.orgPath("/repos?type=all&sort=full_name&per_page=100"), func(page []repository) error {
		for _, rp := range page {
			name := strings.ToLower(rp.Name)
			if r.cfg.repos != nil && !r.cfg.repos[name] {
				continue
			}
			found[name] = true
			if rp.Archived && !r.cfg.includeArchived {
				archived++
				continue
			}
			repos = append(repos, rp)
		}
		return nil
	})
	if err != nil {
		return repos, err
	}
	if res.Truncated {
		r.Log("warn", fmt.Sprintf("the repository listing %s: only the first %d repositories are checked", res.Reason, res.Items))
	}
	if archived > 0 {
		r.Log("info", fmt.Sprintf("%d archived repositories skipped", archived))
	}
	var missing []string
	for name := range r.cfg.repos {
		if !found[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 && !res.Truncated {
		sort.Strings(missing)
		r.Log("warn", "repositories named in the connection but not found in the organization: "+strings.Join(missing, ", "))
	}
	return repos, nil
}

func (r *run) repositories(ctx context.Context) {
	if !r.Selected(repoChecks...) {
		return
	}
	repos, err := r.listRepos(ctx)
	if err != nil {
		for _, id := range repoChecks {
			r.End(id, fmt.Errorf("listing the organization's repositories: %w", err))
		}
		return
	}
	r.Log("info", fmt.Sprintf("checking %d repositories", len(repos)))
	collab := &collaborators{admin: map[int64][]string{}, access: map[int64][]string{}, users: map[int64]collaborator{}}
	checkrun.Each(r.p.Concurrency, repos, func(rp repository) {
		if ctx.Err() != nil {
			return
		}
		r.branchChecks(ctx, rp)
		r.secretScanning(rp)
		r.dependabot(ctx, rp)
		r.repoCollaborators(ctx, rp, collab)
	})
	if ctx.Err() != nil {
		for _, id := range repoChecks {
			r.End(id, fmt.Errorf("run stopped before every repository was checked: %w", ctx.Err()))
		}
		return
	}
	r.outsideCollaborators(ctx, collab, len(repos))
}

type protection struct {
	RequiredPullRequestReviews *struct {
		RequiredApprovingReviewCount int  `json:"required_approving_review_count"`
		DismissStaleReviews          bool `json:"dismiss_stale_reviews"`
		RequireCodeOwnerReviews      bool `json:"require_code_owner_reviews"`
	} `json:"required_pull_request_reviews"`
	EnforceAdmins    *enabledFlag `json:"enforce_admins"`
	AllowForcePushes *enabledFlag `json:"allow_force_pushes"`
	AllowDeletions   *enabledFlag `json:"allow_deletions"`
}

type enabledFlag struct {
	Enabled bool `json:"enabled"`
}

type branchRule struct {
	Type          string `json:"type"`
	RulesetID     int64  `json:"ruleset_id"`
	RulesetSource string `json:"ruleset_source"`
	Parameters    struct {
		RequiredApprovingReviewCount int `json:"required_approving_review_count"`
	} `json:"parameters"`
}

// branchChecks runs branch_protection and required_reviews on the default
// branch: classic branch protection first, then the rules that apply to the
// branch (rulesets, including the organization's).
func (r *run) branchChecks(ctx context.Context, rp repository) {
	wantProt, wantRev := r.Selected(CheckBranchProtection), r.Selected(CheckRequiredReviews)
	if !wantProt && !wantRev {
		return
	}
	res := repoResource(rp)
	both := func(err error) {
		r.Error(CheckBranchProtection, res, err)
		r.Error(CheckRequiredReviews, res, err)
	}
	if rp.DefaultBranch == "" {
		msg := "the repository has no default branch (it is empty)"
		r.ErrorMsg(CheckBranchProtection, res, msg, nil)
		r.ErrorMsg(CheckRequiredReviews, res, msg, nil)
		return
	}
	branch := url.PathEscape(rp.DefaultBranch)
	resp, err := r.api.Get(ctx, r.repoPath(rp, "/branches/"+branch+"/protection"), http.StatusOK, http.StatusNotFound)
	if err != nil {
		both(err)
		return
	}
	var classic *protection
	if resp.Status == http.StatusOK {
		classic = &protection{}
		if err := json.Unmarshal(resp.Body, classic); err != nil {
			both(fmt.Errorf("branch protection of %s: unexpected answer: %v", rp.FullName, err))
			return
		}
	} else if msg := restapiMessage(resp); !strings.Contains(strings.ToLower(msg), "not protected") {
		both(fmt.Errorf("branch protection of %s: GitHub answered 404 (%s): the branch is missing or the token lacks admin access to the repository", rp.FullName, msg))
		return
	}
	classicReviews := 0
	if classic != nil && classic.RequiredPullRequestReviews != nil {
		classicReviews = classic.RequiredPullRequestReviews.RequiredApprovingReviewCount
	}
	var rules []branchRule
	rulesNote := ""
	if classic == nil || (wantRev && classicReviews < 1) {
		if _, err := restapi.List(ctx, r.api, r.repoPath(rp, "/rules/branches/"+branch+"?per_page=100"), func(page []branchRule) error {
			rules = append(rules, page...)
			return nil
		}); err != nil {
			if restapi.Status(err) == 0 {
				both(err)
				return
			}
			rulesNote = "rulesets not readable: " + restapi.Message(err)
		}
	}
	ruleTypes := []string{}
	rulesetReviews := 0
	for _, rl := range rules {
		ruleTypes = append(ruleTypes, rl.Type)
		if rl.Type == "pull_request" && rl.Parameters.RequiredApprovingReviewCount > rulesetReviews {
			rulesetReviews = rl.Parameters.RequiredApprovingReviewCount
		}
	}
	details := map[string]any{"branch": rp.DefaultBranch, "branchProtection": classic != nil, "rulesetRules": ruleTypes}
	if rulesNote != "" {
		details["note"] = rulesNote
	}
	if classic != nil {
		details["allowForcePushes"] = classic.AllowForcePushes != nil && classic.AllowForcePushes.Enabled
		details["allowDeletions"] = classic.AllowDeletions != nil && classic.AllowDeletions.Enabled
		details["enforceAdmins"] = classic.EnforceAdmins != nil && classic.EnforceAdmins.Enabled
	}
	switch {
	case classic != nil:
		r.Pass(CheckBranchProtection, res, fmt.Sprintf("%s is protected by a branch protection rule", rp.DefaultBranch), details)
	case len(rules) > 0:
		r.Pass(CheckBranchProtection, res, fmt.Sprintf("%s is protected by ruleset rules (%s)", rp.DefaultBranch, strings.Join(ruleTypes, ", ")), details)
	default:
		r.Fail(CheckBranchProtection, res, fmt.Sprintf("the default branch %s of %s has no branch protection rule and no ruleset", rp.DefaultBranch, rp.FullName), details)
	}
	reviews := max(classicReviews, rulesetReviews)
	rd := map[string]any{"branch": rp.DefaultBranch, "requiredApprovingReviews": reviews,
		"branchProtectionReviews": classicReviews, "rulesetReviews": rulesetReviews}
	if rulesNote != "" {
		rd["note"] = rulesNote
	}
	if reviews >= 1 {
		r.Pass(CheckRequiredReviews, res, fmt.Sprintf("merging into %s needs %d approving review(s)", rp.DefaultBranch, reviews), rd)
	} else {
		r.Fail(CheckRequiredReviews, res, fmt.Sprintf("merging into the default branch %s of %s needs no approving review", rp.DefaultBranch, rp.FullName), rd)
	}
}

// restapiMessage is the message of an accepted non-2xx answer.
func restapiMessage(resp *restapi.Response) string {
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(resp.Body, &body)
	return body.Message
}

func (r *run) secretScanning(rp repository) {
	if !r.Selected(CheckSecretScanning) {
		return
	}
	res := repoResource(rp)
	sa := rp.SecurityAndAnalysis
	if sa == nil || sa.SecretScanning == nil {
		r.ErrorMsg(CheckSecretScanning, res, "GitHub did not show the repository's security and analysis settings: the token needs admin access to the repository (or the organization owner role)", nil)
		return
	}
	details := map[string]any{"secretScanning": sa.SecretScanning.Status, "visibility": rp.Visibility}
	if sa.SecretScanningPushProtection != nil {
		details["pushProtection"] = sa.SecretScanningPushProtection.Status
	}
	if sa.SecretScanning.Status == "enabled" {
		r.Pass(CheckSecretScanning, res, "secret scanning is enabled", details)
		return
	}
	r.Fail(CheckSecretScanning, res, fmt.Sprintf("secret scanning is %s on %s", orNone(sa.SecretScanning.Status), rp.FullName), details)
}

func (r *run) dependabot(ctx context.Context, rp repository) {
	if !r.Selected(CheckDependabotAlerts) || r.Ended(CheckDependabotAlerts) {
		return
	}
	res := repoResource(rp)
	resp, err := r.api.Get(ctx, r.repoPath(rp, "/vulnerability-alerts"), http.StatusNoContent, http.StatusNotFound)
	if err != nil {
		r.Error(CheckDependabotAlerts, res, err)
		return
	}
	if resp.Status == http.StatusNoContent {
		r.Pass(CheckDependabotAlerts, res, "Dependabot alerts are enabled", map[string]any{"vulnerabilityAlerts": true})
		return
	}
	r.Fail(CheckDependabotAlerts, res, "Dependabot alerts are not enabled on "+rp.FullName,
		map[string]any{"vulnerabilityAlerts": false, "note": "GitHub answers 404 both when alerts are off and when the token cannot read the setting (it needs repository Administration read)"})
}

// collaborators gathers outside collaborators across repositories.
type collaborators struct {
	mu     sync.Mutex
	admin  map[int64][]string // user id -> repositories with admin
	access map[int64][]string // user id -> repositories with any access
	users  map[int64]collaborator
	failed []string // repositories whose collaborators could not be read
}

func (r *run) repoCollaborators(ctx context.Context, rp repository, c *collaborators) {
	if !r.Selected(CheckOutsideCollaborators) || r.Ended(CheckOutsideCollaborators) {
		return
	}
	var list []collaborator
	_, err := restapi.List(ctx, r.api, r.repoPath(rp, "/collaborators?affiliation=outside&per_page=100"), func(page []collaborator) error {
		list = append(list, page...)
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		var rl *restapi.RateLimitError
		if errors.As(err, &rl) {
			r.End(CheckOutsideCollaborators, err)
			return
		}
		c.failed = append(c.failed, rp.FullName)
		r.Log("warn", fmt.Sprintf("outside collaborators of %s not readable: %v", rp.FullName, err))
		return
	}
	for _, u := range list {
		c.users[u.ID] = u
		c.access[u.ID] = append(c.access[u.ID], rp.FullName)
		if u.Permissions["admin"] || u.RoleName == "admin" {
			c.admin[u.ID] = append(c.admin[u.ID], rp.FullName)
		}
	}
}

func (r *run) outsideCollaborators(ctx context.Context, c *collaborators, repoCount int) {
	if !r.Selected(CheckOutsideCollaborators) || r.Ended(CheckOutsideCollaborators) {
		return
	}
	all, err := r.listUsers(ctx, r.orgPath("/outside_collaborators?per_page=100"))
	if err != nil {
		r.Error(CheckOutsideCollaborators, r.scope, err)
		return
	}
	for _, u := range all {
		if _, ok := c.users[u.ID]; !ok {
			c.users[u.ID] = collaborator{Login: u.Login, ID: u.ID}
		}
	}
	if len(c.users) == 0 {
		r.Pass(CheckOutsideCollaborators, r.scope, "the organization has no outside collaborators",
			map[string]any{"outsideCollaborators": 0, "repositoriesChecked": repoCount})
		return
	}
	ids := make([]int64, 0, len(c.users))
	for id := range c.users {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return c.users[ids[i]].Login < c.users[ids[j]].Login })
	for _, id := range ids {
		u := c.users[id]
		res := checkrun.Resource{Type: "outside_collaborator", ID: strconv.FormatInt(id, 10), Name: u.Login}
		details := map[string]any{"login": u.Login, "repositories": nonNil(c.access[id]), "adminOn": nonNil(c.admin[id])}
		if len(c.failed) > 0 {
			details["unreadableRepositories"] = c.failed
		}
		if admin := c.admin[id]; len(admin) > 0 {
			r.Fail(CheckOutsideCollaborators, res, fmt.Sprintf("outside collaborator %s has admin permission on %s", u.Login, strings.Join(admin, ", ")), details)
			continue
		}
		r.Pass(CheckOutsideCollaborators, res, fmt.Sprintf("outside collaborator %s has no admin permission on the %d repositories checked", u.Login, repoCount), details)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
