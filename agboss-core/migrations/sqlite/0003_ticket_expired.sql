-- agboss store, schema 3: a ticket nobody decided before its expiry moves to `expired`.
-- SQLite cannot change a CHECK constraint: the table is rebuilt with the new one.

CREATE TABLE tickets_v3 (
    tenant        TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    -- Creation order within the run (run_tickets is oldest first).
    ord           INTEGER NOT NULL,
    -- The run's thread, copied from the run when the ticket is created.
    thread_id     TEXT,
    run_id        TEXT    NOT NULL,
    step_key      TEXT    NOT NULL,
    call_id       TEXT    NOT NULL,
    tool          TEXT    NOT NULL,
    channel       TEXT    NOT NULL,
    -- Canonical JSON of the validated input, and its SHA-256 (hex).
    input         TEXT    NOT NULL,
    fingerprint   TEXT    NOT NULL,
    chain_digest  TEXT    NOT NULL,
    state         TEXT    NOT NULL
        CHECK (state IN ('pending', 'decided', 'executing', 'completed', 'superseded', 'expired')),
    -- TicketDecision as JSON, once decided.
    decision      TEXT,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (tenant, id),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);
INSERT INTO tickets_v3 (tenant, id, ord, thread_id, run_id, step_key, call_id, tool, channel,
    input, fingerprint, chain_digest, state, decision, created_at_ms, expires_at_ms)
SELECT tenant, id, ord, thread_id, run_id, step_key, call_id, tool, channel,
    input, fingerprint, chain_digest, state, decision, created_at_ms, expires_at_ms
FROM tickets;
DROP TABLE tickets;
ALTER TABLE tickets_v3 RENAME TO tickets;
CREATE INDEX tickets_by_run ON tickets (tenant, run_id, ord);
