//! [`SecretStore`] on [`SqlStore`]: table `tenant_secrets`, keyed by tenant and name.
use super::db::{Bind, backend};
use super::dialect::Dialect;
use super::store::SqlStore;
use crate::store::error::StoreError;
use crate::store::secrets::SecretStore;
use crate::store::types::now_ms;

const SELECT_SECRET: &str = "SELECT value FROM tenant_secrets WHERE tenant = $1 AND name = $2";
const PUT_SECRET: &str = "INSERT INTO tenant_secrets (tenant, name, value, updated_at_ms) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, name) \
     DO UPDATE SET value = excluded.value, updated_at_ms = excluded.updated_at_ms RETURNING 1";
const DELETE_SECRET: &str =
    "DELETE FROM tenant_secrets WHERE tenant = $1 AND name = $2 RETURNING 1";

impl<D: Dialect> SecretStore for SqlStore<D> {
    async fn secret(&self, tenant: &str, name: &str) -> Result<Option<String>, StoreError> {
        const OP: &str = "read secret";
        let q = sqlx::query(SELECT_SECRET).text(tenant).text(name);
        match self.optional(OP, q).await? {
            Some(row) => D::get_text(&row, 0).map(Some).map_err(backend(OP)),
            None => Ok(None),
        }
    }

    async fn put_secret(&self, tenant: &str, name: &str, value: &str) -> Result<(), StoreError> {
        const OP: &str = "write secret";
        let q = sqlx::query(PUT_SECRET)
            .text(tenant)
            .text(name)
            .text(value)
            .int(now_ms());
        self.write_one(OP, q).await.map(drop)
    }

    async fn delete_secret(&self, tenant: &str, name: &str) -> Result<(), StoreError> {
        const OP: &str = "delete secret";
        let q = sqlx::query(DELETE_SECRET).text(tenant).text(name);
        self.write_one(OP, q).await.map(drop)
    }
}
