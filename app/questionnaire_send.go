package app

import (
	"context"
	"fmt"
)

// CreateAndSendQuestionnaire creates a questionnaire for a vendor (from a
// template, an earlier questionnaire or a list of questions) and sends it
// in one transaction: either the vendor gets a link to a new
// questionnaire, or nothing is created and no allowance is used. The
// link's token is in the answer only.
func (a *App) CreateAndSendQuestionnaire(ctx context.Context, in QuestionnaireCreate, send QuestionnaireSend) (*SentLink, error) {
	_, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if in.VendorID == nil || *in.VendorID == "" {
		return nil, Invalid("vendorId", CodeRequired, nil, "vendorId is required: a questionnaire is sent to a vendor")
	}
	send.VendorID = nil
	var out *SentLink
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		q, err := a.CreateQuestionnaire(ctx, in)
		if err != nil {
			return err
		}
		out, err = a.SendQuestionnaire(ctx, q.ID, send)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create and send questionnaire: %w", err)
	}
	return out, nil
}
