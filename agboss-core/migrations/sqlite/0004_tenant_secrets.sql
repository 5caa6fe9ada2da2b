-- agboss store, schema 4: each tenant's secrets by name (the credentials of the remote MCP
-- servers it connected, say). Keyed by tenant like every table: a tenant reads only its own.

CREATE TABLE tenant_secrets (
    tenant        TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    value         TEXT    NOT NULL,
    updated_at_ms BIGINT  NOT NULL,
    PRIMARY KEY (tenant, name)
);
