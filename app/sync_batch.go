package app

import "context"

// syncJoinerBatch is how many joiners a run commits in one transaction.
// Each joiner is a person, a membership, their directory state, training
// assignments, onboarding tasks, an audit record and events: one commit
// each made a first sync of 10,000 users take minutes.
const syncJoinerBatch = 100

// pendingJoiner is a planned joiner waiting for its batch.
type pendingJoiner struct {
	ch SyncChange
	u  *DirectoryUser
}

// commitJoiners creates the waiting joiners in one transaction, each in a
// savepoint of its own: a joiner the register refuses is an error result
// and the others are still created. The batch commits all or nothing, so
// a run stopped by a restart leaves no half-created person; their results
// are kept only once the batch has committed.
func (s *syncSession) commitJoiners(ctx context.Context) {
	batch := s.joiners
	s.joiners = nil
	if len(batch) == 0 {
		return
	}
	errs := make([]error, len(batch))
	err := s.a.store.InTx(ctx, func(ctx context.Context) error {
		for i := range batch {
			j := &batch[i]
			if errs[i] = s.applyChange(ctx, &j.ch, j.u); errs[i] != nil {
				s.forgetJoiner(&j.ch)
			}
		}
		return nil
	})
	for i := range batch {
		j := &batch[i]
		if err != nil {
			// The batch did not commit: nobody in it was created.
			s.forgetJoiner(&j.ch)
			errs[i] = err
		}
		s.keep(j.ch, j.u, errs[i])
	}
}

// forgetJoiner drops what a rolled-back creation left in the session.
func (s *syncSession) forgetJoiner(ch *SyncChange) {
	if ch.PersonID != "" {
		delete(s.state, ch.PersonID)
		ch.PersonID = ""
	}
}
