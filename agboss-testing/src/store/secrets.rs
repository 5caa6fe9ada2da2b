//! Checks of [`SecretStore`]: each tenant's secrets by name, set, replaced, read and removed,
//! never another tenant's.
use agboss_core::store::SecretStore;

/// A secret set is read back as given, replaced by the next set, and gone once removed;
/// removing one that is not there is not an error; names are distinct.
pub async fn secrets_round_trip<S: SecretStore>(store: &S) {
    assert_eq!(store.secret("acme", "crm").await.unwrap(), None);
    store.put_secret("acme", "crm", "t-1").await.unwrap();
    store.put_secret("acme", "billing", "b-1").await.unwrap();
    assert_eq!(
        store.secret("acme", "crm").await.unwrap().as_deref(),
        Some("t-1")
    );
    store.put_secret("acme", "crm", "t-2").await.unwrap();
    assert_eq!(
        store.secret("acme", "crm").await.unwrap().as_deref(),
        Some("t-2")
    );
    assert_eq!(
        store.secret("acme", "billing").await.unwrap().as_deref(),
        Some("b-1")
    );
    store.delete_secret("acme", "crm").await.unwrap();
    assert_eq!(store.secret("acme", "crm").await.unwrap(), None);
    assert_eq!(
        store.secret("acme", "billing").await.unwrap().as_deref(),
        Some("b-1")
    );
    store.delete_secret("acme", "crm").await.unwrap();
    store.delete_secret("nobody", "nothing").await.unwrap();
}

/// A tenant reads, replaces and removes only its own secrets: another tenant's secret of the
/// same name is not there, and is untouched by the first tenant's writes.
pub async fn secrets_are_scoped_by_tenant<S: SecretStore>(store: &S) {
    store.put_secret("acme", "crm", "t-acme").await.unwrap();
    assert_eq!(store.secret("globex", "crm").await.unwrap(), None);
    store.put_secret("globex", "crm", "t-globex").await.unwrap();
    store.put_secret("acme", "crm", "t-acme-2").await.unwrap();
    assert_eq!(
        store.secret("globex", "crm").await.unwrap().as_deref(),
        Some("t-globex")
    );
    store.delete_secret("acme", "crm").await.unwrap();
    assert_eq!(
        store.secret("globex", "crm").await.unwrap().as_deref(),
        Some("t-globex")
    );
    assert_eq!(store.secret("acme", "crm").await.unwrap(), None);
}

/// Values are kept as given: empty, long, non-ASCII and JSON text, and names with separators.
pub async fn secrets_keep_values_as_given<S: SecretStore>(store: &S) {
    let long = "x".repeat(64 * 1024);
    let values = [
        (
            "mcp-server:crm",
            r#"[["authorization","Bearer t"]]"#.to_owned(),
        ),
        ("empty", String::new()),
        ("long", long),
        ("unicode", "clé 🔑 'quoted' \"double\" \\ \n".to_owned()),
    ];
    for (name, value) in &values {
        store.put_secret("acme", name, value).await.unwrap();
    }
    for (name, value) in &values {
        let read = store.secret("acme", name).await.unwrap();
        assert_eq!(read.as_deref(), Some(value.as_str()), "{name}");
    }
}

/// Concurrent sets of one secret leave exactly one of the values set.
pub async fn concurrent_puts_leave_one_value<S: SecretStore>(store: &S) {
    let values: Vec<String> = (0..8).map(|i| format!("t-{i}")).collect();
    let puts = values.iter().map(|v| store.put_secret("acme", "crm", v));
    for put in futures::future::join_all(puts).await {
        put.unwrap();
    }
    let read = store.secret("acme", "crm").await.unwrap().unwrap();
    assert!(values.contains(&read), "{read}");
}
