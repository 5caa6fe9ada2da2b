//! [`SecretStore`] on [`MemoryStore`].
use super::MemoryStore;
use crate::store::error::StoreError;
use crate::store::secrets::SecretStore;

impl SecretStore for MemoryStore {
    async fn secret(&self, tenant: &str, name: &str) -> Result<Option<String>, StoreError> {
        let key = (tenant.to_owned(), name.to_owned());
        Ok(self.state().secrets.get(&key).cloned())
    }

    async fn put_secret(&self, tenant: &str, name: &str, value: &str) -> Result<(), StoreError> {
        let key = (tenant.to_owned(), name.to_owned());
        self.state().secrets.insert(key, value.to_owned());
        Ok(())
    }

    async fn delete_secret(&self, tenant: &str, name: &str) -> Result<(), StoreError> {
        let key = (tenant.to_owned(), name.to_owned());
        self.state().secrets.remove(&key);
        Ok(())
    }
}
