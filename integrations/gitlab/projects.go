package gitlab

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/compliance-appliance/compliance/integrations/internal/checkrun"
	"github.com/compliance-appliance/compliance/integrations/internal/restapi"
)

var projectChecks = []string{CheckProtectedDefaultBranch, CheckMergeRequestApprovals}

func projectResource(p project) checkrun.Resource {
	return checkrun.Resource{Type: "project", ID: strconv.FormatInt(p.ID, 10), Name: p.PathWithNamespace}
}

func projectPath(p project, rest string) string {
	return "/projects/" + strconv.FormatInt(p.ID, 10) + rest
}

func (r *run) listProjects(ctx context.Context) ([]project, error) {
	path := r.cfg.groupPath("/projects?include_subgroups=true&with_shared=false&order_by=id&sort=asc&per_page=100")
	if !r.cfg.includeArchived {
		path += "&archived=false"
	}
	prefix := strings.ToLower(r.group.FullPath) + "/"
	found := map[string]bool{}
	var projects []project
	res, err := restapi.List(ctx, r.api, path, func(page []project) error {
		for _, p := range page {
			full := strings.ToLower(p.PathWithNamespace)
			rel := strings.TrimPrefix(full, prefix)
			if r.cfg.projects != nil && !r.cfg.projects[full] && !r.cfg.projects[rel] {
				continue
			}
			found[full], found[rel] = true, true
			if p.Archived && !r.cfg.includeArchived {
				continue
			}
			projects = append(projects, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res.Truncated {
		r.Log("warn", fmt.Sprintf("the project listing %s: only the first %d projects are checked", res.Reason, res.Items))
	}
	var missing []string
	for name := range r.cfg.projects {
		if !found[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 && !res.Truncated {
		sort.Strings(missing)
		r.Log("warn", "projects named in the connection but not found in the group: "+strings.Join(missing, ", "))
	}
	return projects, nil
}

func (r *run) projects(ctx context.Context) {
	if !r.Selected(projectChecks...) {
		return
	}
	projects, err := r.listProjects(ctx)
	if err != nil {
		for _, id := range projectChecks {
			r.End(id, fmt.Errorf("listing the group's projects: %w", err))
		}
		return
	}
	r.Log("info", fmt.Sprintf("checking %d projects", len(projects)))
	checkrun.Each(r.p.Concurrency, projects, func(p project) {
		if ctx.Err() != nil {
			return
		}
		if p.DefaultBranch == "" {
			msg := "the project has no default branch (its repository is empty or disabled)"
			r.ErrorMsg(CheckProtectedDefaultBranch, projectResource(p), msg, nil)
			r.ErrorMsg(CheckMergeRequestApprovals, projectResource(p), msg, nil)
			return
		}
		r.protectedBranch(ctx, p)
		r.approvals(ctx, p)
	})
	if ctx.Err() != nil {
		for _, id := range projectChecks {
			r.End(id, fmt.Errorf("run stopped before every project was checked: %w", ctx.Err()))
		}
	}
}

type accessLevel struct {
	AccessLevel            *int   `json:"access_level"`
	AccessLevelDescription string `json:"access_level_description"`
	UserID                 *int64 `json:"user_id"`
	GroupID                *int64 `json:"group_id"`
	DeployKeyID            *int64 `json:"deploy_key_id"`
}

type protectedBranch struct {
	ID               int64         `json:"id"`
	Name             string        `json:"name"`
	PushAccessLevels []accessLevel `json:"push_access_levels"`
	AllowForcePush   bool          `json:"allow_force_push"`
}

// matchBranch reports whether a protected branch name or wildcard
// ("release/*", "*-stable") covers branch.
func matchBranch(pattern, branch string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == branch
	}
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	ok, _ := regexp.MatchString("^"+strings.Join(parts, ".*")+"$", branch)
	return ok
}

// protectedBranch checks the rules covering the default branch. When
// several rules match, GitLab lets through what any of them allows, so one
// permissive rule is enough to fail.
func (r *run) protectedBranch(ctx context.Context, p project) {
	if !r.Selected(CheckProtectedDefaultBranch) || r.Ended(CheckProtectedDefaultBranch) {
		return
	}
	res := projectResource(p)
	var matching []protectedBranch
	if _, err := restapi.List(ctx, r.api, projectPath(p, "/protected_branches?per_page=100"), func(page []protectedBranch) error {
		for _, b := range page {
			if matchBranch(b.Name, p.DefaultBranch) {
				matching = append(matching, b)
			}
		}
		return nil
	}); err != nil {
		r.Error(CheckProtectedDefaultBranch, res, err)
		return
	}
	if len(matching) == 0 {
		r.Fail(CheckProtectedDefaultBranch, res, fmt.Sprintf("the default branch %s of %s is not protected", p.DefaultBranch, p.PathWithNamespace),
			map[string]any{"branch": p.DefaultBranch, "protected": false})
		return
	}
	var rules, pushers, problems []string
	forcePush := false
	for _, b := range matching {
		rules = append(rules, b.Name)
		if b.AllowForcePush {
			forcePush = true
			problems = append(problems, fmt.Sprintf("rule %q allows force push", b.Name))
		}
		for _, a := range b.PushAccessLevels {
			switch {
			case a.UserID != nil:
				pushers = append(pushers, fmt.Sprintf("user %d", *a.UserID))
			case a.GroupID != nil:
				pushers = append(pushers, fmt.Sprintf("group %d", *a.GroupID))
			case a.DeployKeyID != nil:
				pushers = append(pushers, fmt.Sprintf("deploy key %d", *a.DeployKeyID))
			case a.AccessLevel != nil:
				pushers = append(pushers, a.AccessLevelDescription)
				if lvl := *a.AccessLevel; lvl != accessNoOne && lvl < accessMaintainer {
					problems = append(problems, fmt.Sprintf("rule %q lets %s push", b.Name, orLevel(a)))
				}
			}
		}
	}
	details := map[string]any{"branch": p.DefaultBranch, "protected": true, "rules": rules, "allowForcePush": forcePush, "pushAccess": nonNil(pushers)}
	if len(problems) > 0 {
		details["problems"] = problems
		r.Fail(CheckProtectedDefaultBranch, res, fmt.Sprintf("the default branch %s of %s is protected too weakly: %s", p.DefaultBranch, p.PathWithNamespace, strings.Join(problems, "; ")), details)
		return
	}
	r.Pass(CheckProtectedDefaultBranch, res, fmt.Sprintf("%s is protected: no force push, push limited to %s", p.DefaultBranch, strings.Join(nonNil(pushers), ", ")), details)
}

func orLevel(a accessLevel) string {
	if a.AccessLevelDescription != "" {
		return a.AccessLevelDescription
	}
	return "access level " + strconv.Itoa(*a.AccessLevel)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type approvalRule struct {
	ID                            int64  `json:"id"`
	Name                          string `json:"name"`
	RuleType                      string `json:"rule_type"`
	ApprovalsRequired             int    `json:"approvals_required"`
	AppliesToAllProtectedBranches bool   `json:"applies_to_all_protected_branches"`
	ProtectedBranches             []struct {
		Name string `json:"name"`
	} `json:"protected_branches"`
}

type approvalSettings struct {
	ApprovalsBeforeMerge             int  `json:"approvals_before_merge"`
	MergeRequestsAuthorApproval      bool `json:"merge_requests_author_approval"`
	DisableOverridingApproversPerMR  bool `json:"disable_overriding_approvers_per_merge_request"`
	MergeRequestsDisableCommitterApp bool `json:"merge_requests_disable_committers_approval"`
	ResetApprovalsOnPush             bool `json:"reset_approvals_on_push"`
}

// approvals checks that merge requests into the default branch need an
// approval: the approval rules (Premium and Ultimate), else the project's
// approvals_before_merge.
func (r *run) approvals(ctx context.Context, p project) {
	if !r.Selected(CheckMergeRequestApprovals) || r.Ended(CheckMergeRequestApprovals) {
		return
	}
	res := projectResource(p)
	var rules []approvalRule
	_, rulesErr := restapi.List(ctx, r.api, projectPath(p, "/approval_rules?per_page=100"), func(page []approvalRule) error {
		rules = append(rules, page...)
		return nil
	})
	// Only a refusal (the tier has no approval rules, or the token may not
	// read them) falls back to the settings; any other failure leaves the
	// check undecided.
	if st := restapi.Status(rulesErr); rulesErr != nil && st != http.StatusForbidden && st != http.StatusNotFound {
		r.Error(CheckMergeRequestApprovals, res, rulesErr)
		return
	}
	var settings approvalSettings
	if _, err := r.api.GetJSON(ctx, projectPath(p, "/approvals"), &settings); err != nil {
		if rulesErr != nil {
			r.ErrorMsg(CheckMergeRequestApprovals, res, fmt.Sprintf(
				"GitLab refused the project's approval rules (%s) and settings (%s): merge request approvals need GitLab Premium or Ultimate and a token that can read the project's settings (Maintainer)",
				restapi.Message(rulesErr), errorText(err)), nil)
			return
		}
		if restapi.Status(err) == 0 {
			r.Error(CheckMergeRequestApprovals, res, err)
			return
		}
	}
	required := settings.ApprovalsBeforeMerge
	var applying []string
	for _, rule := range rules {
		if rule.RuleType != "any_approver" && rule.RuleType != "regular" {
			continue
		}
		applies := len(rule.ProtectedBranches) == 0 || rule.AppliesToAllProtectedBranches
		for _, b := range rule.ProtectedBranches {
			if matchBranch(b.Name, p.DefaultBranch) {
				applies = true
			}
		}
		if !applies {
			continue
		}
		applying = append(applying, fmt.Sprintf("%s (%d)", rule.Name, rule.ApprovalsRequired))
		required = max(required, rule.ApprovalsRequired)
	}
	details := map[string]any{"branch": p.DefaultBranch, "requiredApprovals": required, "rules": nonNil(applying),
		"approvalsBeforeMerge": settings.ApprovalsBeforeMerge, "authorCanApprove": settings.MergeRequestsAuthorApproval}
	if rulesErr != nil {
		details["note"] = "approval rules not readable: " + restapi.Message(rulesErr)
	}
	if required >= 1 {
		r.Pass(CheckMergeRequestApprovals, res, fmt.Sprintf("merge requests into %s need %d approval(s)", p.DefaultBranch, required), details)
		return
	}
	r.Fail(CheckMergeRequestApprovals, res, fmt.Sprintf("merge requests into the default branch %s of %s need no approval", p.DefaultBranch, p.PathWithNamespace), details)
}

func errorText(err error) string {
	if m := restapi.Message(err); m != "" {
		return m
	}
	if s := restapi.Status(err); s != 0 {
		return http.StatusText(s)
	}
	return err.Error()
}
