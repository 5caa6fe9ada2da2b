//! [`UsageStore`] on [`MemoryStore`]: each check and add under the store's one lock.
use super::MemoryStore;
use crate::store::error::StoreError;
use crate::store::traits::UsageStore;
use crate::store::usage::UsageKey;

impl UsageStore for MemoryStore {
    async fn reserve_usage(
        &self,
        key: &UsageKey,
        amount: u64,
        max: u64,
    ) -> Result<Option<u64>, StoreError> {
        let mut state = self.state();
        let used = state.usage.entry(key.clone()).or_default();
        match used.checked_add(amount) {
            Some(next) if next <= max => {
                *used = next;
                Ok(Some(next))
            }
            _ => Ok(None),
        }
    }

    async fn add_usage(&self, key: &UsageKey, amount: u64) -> Result<u64, StoreError> {
        let mut state = self.state();
        let used = state.usage.entry(key.clone()).or_default();
        *used = used.saturating_add(amount);
        Ok(*used)
    }

    async fn release_usage(&self, key: &UsageKey, amount: u64) -> Result<(), StoreError> {
        if let Some(used) = self.state().usage.get_mut(key) {
            *used = used.saturating_sub(amount);
        }
        Ok(())
    }

    async fn usage(&self, key: &UsageKey) -> Result<u64, StoreError> {
        Ok(self.state().usage.get(key).copied().unwrap_or_default())
    }

    async fn prune_usage(&self, before_ms: i64) -> Result<u64, StoreError> {
        let mut state = self.state();
        let before = state.usage.len();
        state
            .usage
            .retain(|key, _| key.window_start_ms >= before_ms);
        Ok((before - state.usage.len()) as u64)
    }
}
