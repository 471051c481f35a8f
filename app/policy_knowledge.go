package app

import (
	"context"
	"fmt"
)

// policyKnowledge is the knowledge source over published policies: every
// policy that is not archived and has a published version offers the text
// of its current version, cited by the policy's name.
type policyKnowledge struct{ a *App }

// PolicyKnowledgeSource returns the knowledge source over the current
// published version of every policy; wire it with AddKnowledgeSource.
func (a *App) PolicyKnowledgeSource() KnowledgeSource { return policyKnowledge{a: a} }

// Name is the sourceType of its hits.
func (policyKnowledge) Name() string { return "policy" }

// Documents returns one document per published, unarchived policy of the
// organization: its current version's rendered text. A draft never
// published, and edits not yet published, are not offered.
func (s policyKnowledge) Documents(ctx context.Context, orgID string) ([]KnowledgeDocument, error) {
	var docs []KnowledgeDocument
	const perPage = 200
	for page := 1; ; page++ {
		l, err := s.a.store.ListPolicies(ctx, orgID, PolicyFilter{ExcludeContent: true, Page: Page{Page: page, PerPage: perPage}})
		if err != nil {
			return nil, fmt.Errorf("list policies for the knowledge base: %w", err)
		}
		for _, p := range l.Items {
			if p.CurrentVersionID == nil || p.ArchivedAt != nil {
				continue
			}
			v, err := s.a.store.GetPolicyVersion(ctx, orgID, p.ID, *p.CurrentVersionID, 0)
			if err != nil {
				return nil, fmt.Errorf("read policy %s version for the knowledge base: %w", p.ID, err)
			}
			title := v.Name
			if v.Description != "" {
				title += ": " + v.Description
			}
			docs = append(docs, KnowledgeDocument{ID: p.ID, Name: v.Name, Title: title, Text: v.Content})
		}
		if page*perPage >= l.Total || len(l.Items) == 0 {
			return docs, nil
		}
	}
}
