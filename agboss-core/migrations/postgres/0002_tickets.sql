-- agboss store, schema 2: approval tickets (a gated tool call waiting for a human decision).
-- Keyed by tenant like every table: ticket ids are unique within a tenant only.

CREATE TABLE tickets (
    tenant        TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    -- Creation order (run_tickets is oldest first).
    ord           BIGINT  GENERATED ALWAYS AS IDENTITY,
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
        CHECK (state IN ('pending', 'decided', 'executing', 'completed', 'superseded')),
    -- TicketDecision as JSON, once decided.
    decision      TEXT,
    created_at_ms BIGINT  NOT NULL,
    expires_at_ms BIGINT  NOT NULL,
    PRIMARY KEY (tenant, id),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);
CREATE INDEX tickets_by_run ON tickets (tenant, run_id, ord);
