-- agboss store, schema 3: a ticket nobody decided before its expiry moves to `expired`.
ALTER TABLE tickets DROP CONSTRAINT tickets_state_check;
ALTER TABLE tickets ADD CONSTRAINT tickets_state_check
    CHECK (state IN ('pending', 'decided', 'executing', 'completed', 'superseded', 'expired'));
