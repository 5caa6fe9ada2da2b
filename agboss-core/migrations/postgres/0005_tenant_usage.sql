-- agboss store, schema 5: each tenant's usage counters per time window (model requests, tool
-- calls, tokens, cost), reserved before a call by one conditional upsert and settled after.
-- Keyed by tenant like every table; a window is its length and its start, both in ms.

CREATE TABLE tenant_usage (
    tenant          TEXT    NOT NULL,
    counter         TEXT    NOT NULL,
    window_ms       BIGINT  NOT NULL,
    window_start_ms BIGINT  NOT NULL,
    used            BIGINT  NOT NULL,
    PRIMARY KEY (tenant, counter, window_ms, window_start_ms)
);

CREATE INDEX tenant_usage_by_start ON tenant_usage (window_start_ms);
