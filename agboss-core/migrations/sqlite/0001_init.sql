-- agboss store, schema 1: threads and their messages, runs and their journals.
-- Every key starts with the tenant: ids are unique within a tenant only.

CREATE TABLE threads (
    tenant        TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    -- Creation order (list_threads is oldest first).
    ord           INTEGER NOT NULL,
    title         TEXT,
    created_at_ms INTEGER NOT NULL,
    -- Messages in the thread: the seq of the next one.
    message_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX threads_by_order ON threads (tenant, ord);

CREATE TABLE messages (
    tenant    TEXT    NOT NULL,
    thread_id TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    run_id    TEXT    NOT NULL,
    -- Encoding version of body (FORMAT_VERSION).
    format    INTEGER NOT NULL,
    body      TEXT    NOT NULL,
    PRIMARY KEY (tenant, thread_id, seq),
    FOREIGN KEY (tenant, thread_id) REFERENCES threads (tenant, id)
);

CREATE TABLE runs (
    tenant              TEXT    NOT NULL,
    run_id              TEXT    NOT NULL,
    -- Creation order (resumable_runs is oldest first).
    ord                 INTEGER NOT NULL,
    thread_id           TEXT,
    target              TEXT    NOT NULL,
    input               TEXT    NOT NULL,
    status              TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    history_len         INTEGER NOT NULL,
    output              TEXT,
    error               TEXT,
    -- Steps journaled: the seq of the next one.
    steps               INTEGER NOT NULL DEFAULT 0,
    lease_worker        TEXT,
    lease_expires_at_ms INTEGER,
    lease_token         INTEGER NOT NULL,
    created_at_ms       INTEGER NOT NULL,
    PRIMARY KEY (tenant, run_id),
    FOREIGN KEY (tenant, thread_id) REFERENCES threads (tenant, id)
);
CREATE INDEX runs_by_order ON runs (ord);
CREATE INDEX runs_by_thread ON runs (tenant, thread_id);
CREATE INDEX runs_resumable ON runs (ord) WHERE status = 'running';
-- One unfinished run per thread at a time.
CREATE UNIQUE INDEX runs_one_running_per_thread ON runs (tenant, thread_id)
    WHERE status = 'running' AND thread_id IS NOT NULL;

CREATE TABLE steps (
    tenant TEXT    NOT NULL,
    run_id TEXT    NOT NULL,
    seq    INTEGER NOT NULL,
    kind   TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    -- Encoding version of body (FORMAT_VERSION).
    format INTEGER NOT NULL,
    body   TEXT    NOT NULL,
    PRIMARY KEY (tenant, run_id, seq),
    FOREIGN KEY (tenant, run_id) REFERENCES runs (tenant, run_id)
);
