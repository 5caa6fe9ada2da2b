//! [`UsageStore`] on [`SqlStore`]: table `tenant_usage`. A reservation is one conditional
//! upsert (the row's total goes up only when the sum stays within the bound, in the statement
//! that writes it), so concurrent reservations of any number of instances never pass it.
use super::db::{Bind, Q, backend, sql_u64, stored_u64};
use super::dialect::Dialect;
use super::store::SqlStore;
use crate::store::error::StoreError;
use crate::store::traits::UsageStore;
use crate::store::usage::UsageKey;

const RESERVE: &str = "INSERT INTO tenant_usage (tenant, counter, window_ms, window_start_ms, used) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, counter, window_ms, window_start_ms) \
     DO UPDATE SET used = tenant_usage.used + excluded.used \
     WHERE tenant_usage.used + excluded.used <= $6 RETURNING used";
const ADD: &str = "INSERT INTO tenant_usage (tenant, counter, window_ms, window_start_ms, used) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, counter, window_ms, window_start_ms) \
     DO UPDATE SET used = tenant_usage.used + excluded.used RETURNING used";
const RELEASE: &str = "UPDATE tenant_usage SET used = CASE WHEN used > $5 THEN used - $5 ELSE 0 END \
     WHERE tenant = $1 AND counter = $2 AND window_ms = $3 AND window_start_ms = $4 RETURNING used";
const SELECT: &str = "SELECT used FROM tenant_usage \
     WHERE tenant = $1 AND counter = $2 AND window_ms = $3 AND window_start_ms = $4";
const PRUNE: &str = "DELETE FROM tenant_usage WHERE window_start_ms < $1 RETURNING 1";

fn keyed<D: Dialect>(sql: &'static str, key: &UsageKey) -> Q<D> {
    sqlx::query(sql)
        .text(&key.tenant)
        .text(&key.counter)
        .int(key.window_ms)
        .int(key.window_start_ms)
}

impl<D: Dialect> SqlStore<D> {
    fn total(op: &'static str, row: &D::Row) -> Result<u64, StoreError> {
        let used = D::get_int(row, 0).map_err(backend(op))?;
        stored_u64("usage counter", used)
    }
}

impl<D: Dialect> UsageStore for SqlStore<D> {
    async fn reserve_usage(
        &self,
        key: &UsageKey,
        amount: u64,
        max: u64,
    ) -> Result<Option<u64>, StoreError> {
        const OP: &str = "reserve usage";
        if amount > max {
            // A fresh row would be inserted whatever the bound: refused here.
            return Ok(None);
        }
        let q = keyed::<D>(RESERVE, key)
            .int(sql_u64(amount))
            .int(sql_u64(max));
        match self.write_one(OP, q).await? {
            Some(row) => Self::total(OP, &row).map(Some),
            None => Ok(None),
        }
    }

    async fn add_usage(&self, key: &UsageKey, amount: u64) -> Result<u64, StoreError> {
        const OP: &str = "add usage";
        let q = keyed::<D>(ADD, key).int(sql_u64(amount));
        match self.write_one(OP, q).await? {
            Some(row) => Self::total(OP, &row),
            None => Err(StoreError::backend(
                OP,
                std::io::Error::other("the upsert returned no row"),
            )),
        }
    }

    async fn release_usage(&self, key: &UsageKey, amount: u64) -> Result<(), StoreError> {
        const OP: &str = "release usage";
        let q = keyed::<D>(RELEASE, key).int(sql_u64(amount));
        self.write_one(OP, q).await.map(drop)
    }

    async fn usage(&self, key: &UsageKey) -> Result<u64, StoreError> {
        const OP: &str = "read usage";
        match self.optional(OP, keyed::<D>(SELECT, key)).await? {
            Some(row) => Self::total(OP, &row),
            None => Ok(0),
        }
    }

    async fn prune_usage(&self, before_ms: i64) -> Result<u64, StoreError> {
        const OP: &str = "prune usage";
        let mut w = self.write(OP).await?;
        let rows = w.all(OP, sqlx::query(PRUNE).int(before_ms)).await?;
        w.commit(OP).await?;
        Ok(rows.len() as u64)
    }
}
