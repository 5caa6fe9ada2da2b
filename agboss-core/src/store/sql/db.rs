//! What the one SQL implementation needs of a driver ([`Db`], written once as the bounds of a
//! blanket impl, so no generic code repeats them), and the small conversions of SQL integers
//! and driver errors.
use std::time::Duration;

use sqlx::query::Query;
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Row, Type};

use crate::store::error::StoreError;

/// A query of driver `D` on a static SQL text.
pub type Q<D> = Query<'static, D, <D as Database>::Arguments>;

/// A sqlx driver with the types the store binds and reads (text, optional text, integers).
/// Implemented for every driver that has them; the store's generic code needs only this bound.
pub trait Db: Database<Arguments: IntoArguments<Self>> {
    /// A connection as an executor.
    fn exec(conn: &mut Self::Connection) -> impl Executor<'_, Database = Self>;
    /// Binds a text.
    fn text(q: Q<Self>, v: &str) -> Q<Self>;
    /// Binds an optional text.
    fn opt_text(q: Q<Self>, v: Option<&str>) -> Q<Self>;
    /// Binds an integer.
    fn int(q: Q<Self>, v: i64) -> Q<Self>;
    /// Reads column `i` as text.
    fn get_text(row: &Self::Row, i: usize) -> Result<String, sqlx::Error>;
    /// Reads column `i` as optional text.
    fn get_opt_text(row: &Self::Row, i: usize) -> Result<Option<String>, sqlx::Error>;
    /// Reads column `i` as an integer.
    fn get_int(row: &Self::Row, i: usize) -> Result<i64, sqlx::Error>;
    /// Reads column `i` as an optional integer.
    fn get_opt_int(row: &Self::Row, i: usize) -> Result<Option<i64>, sqlx::Error>;
}

impl<D> Db for D
where
    D: Database<Arguments: IntoArguments<D>>,
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    for<'v> &'v str: Encode<'v, D> + Type<D>,
    for<'v> Option<&'v str>: Encode<'v, D>,
    for<'v> i64: Encode<'v, D> + Decode<'v, D> + Type<D>,
    for<'v> String: Decode<'v, D> + Type<D>,
    usize: ColumnIndex<D::Row>,
{
    fn exec(conn: &mut Self::Connection) -> impl Executor<'_, Database = Self> {
        conn
    }
    fn text(q: Q<Self>, v: &str) -> Q<Self> {
        q.bind(v)
    }
    fn opt_text(q: Q<Self>, v: Option<&str>) -> Q<Self> {
        q.bind(v)
    }
    fn int(q: Q<Self>, v: i64) -> Q<Self> {
        q.bind(v)
    }
    fn get_text(row: &Self::Row, i: usize) -> Result<String, sqlx::Error> {
        row.try_get(i)
    }
    fn get_opt_text(row: &Self::Row, i: usize) -> Result<Option<String>, sqlx::Error> {
        row.try_get(i)
    }
    fn get_int(row: &Self::Row, i: usize) -> Result<i64, sqlx::Error> {
        row.try_get(i)
    }
    fn get_opt_int(row: &Self::Row, i: usize) -> Result<Option<i64>, sqlx::Error> {
        row.try_get(i)
    }
}

/// Binding in the order of the placeholders (`$1`, `$2`, ...), on any [`Db`].
pub trait Bind: Sized {
    /// Binds a text.
    fn text(self, v: &str) -> Self;
    /// Binds an optional text.
    fn opt_text(self, v: Option<&str>) -> Self;
    /// Binds an integer.
    fn int(self, v: i64) -> Self;
}

impl<D: Db> Bind for Q<D> {
    fn text(self, v: &str) -> Self {
        D::text(self, v)
    }
    fn opt_text(self, v: Option<&str>) -> Self {
        D::opt_text(self, v)
    }
    fn int(self, v: i64) -> Self {
        D::int(self, v)
    }
}

/// Maps a driver error of `operation` to [`StoreError::Backend`].
pub(crate) fn backend(operation: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |e| StoreError::backend(operation, e)
}

/// Maps a driver error reading a column of a stored `what` row: a value the column's type cannot
/// hold (a damaged row) is [`StoreError::Corrupt`], anything else [`StoreError::Backend`] of
/// `operation`.
pub(super) fn column(
    what: &'static str,
    operation: &'static str,
) -> impl Fn(sqlx::Error) -> StoreError {
    move |e| match e {
        sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) => StoreError::Corrupt {
            what: what.into(),
            detail: e.to_string(),
        },
        e => StoreError::backend(operation, e),
    }
}

/// Maps a migration failure: the database could not be brought to this build's schema.
pub(crate) fn schema_error(e: sqlx::migrate::MigrateError) -> StoreError {
    let detail = match &e {
        sqlx::migrate::MigrateError::VersionMissing(v) => format!(
            "the database has migration {v}, which this build does not know (it was migrated by \
             a newer build)"
        ),
        other => other.to_string(),
    };
    StoreError::Schema {
        detail,
        source: Some(Box::new(e)),
    }
}

/// The most rows a `LIMIT` reads (SQL limits are signed).
pub(super) fn sql_limit(limit: Option<u64>) -> i64 {
    limit.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX))
}

/// A count or position as stored (SQL integers are signed).
pub(super) fn sql_u64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A stored count or position, refused when negative.
pub(super) fn stored_u64(what: &str, n: i64) -> Result<u64, StoreError> {
    u64::try_from(n).map_err(|_| StoreError::Corrupt {
        what: what.into(),
        detail: format!("negative count {n}"),
    })
}

/// `ttl` in ms, saturating.
pub(super) fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}
