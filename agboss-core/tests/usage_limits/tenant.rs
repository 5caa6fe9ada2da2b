//! Tenant windows kept in the app's store: two app instances over one database (a SQLite file,
//! and PostgreSQL when `AGBOSS_TEST_POSTGRES_URL` is set; in CI it must be) share a tenant's
//! window exactly; another tenant is not affected; a store that cannot reserve fails the call
//! closed.
use std::sync::Arc;
use std::time::Duration;

use agboss_core::engine::{LimitKind, RunContext, RunError, TenantUsageLimits, UsageLimits};
use agboss_core::prelude::*;
use agboss_core::store::{MemoryStore, PostgresStore, SharedStore, SqliteStore};
use agboss_testing::flaky::FlakyStore;
use agboss_testing::scripted::{ScriptedModel, Turn};

use super::{Ran, builder, calls, limit_error};

const DAY: Duration = Duration::from_secs(86_400);

/// Two handles on one fresh database (two pools: what two app instances hold), per backend.
async fn store_pairs(dir: &std::path::Path) -> Vec<(&'static str, SharedStore, SharedStore)> {
    let file = dir.join("usage.db");
    let mut all = vec![(
        "sqlite",
        SharedStore::new(SqliteStore::open(&file).await.unwrap()),
        SharedStore::new(SqliteStore::open(&file).await.unwrap()),
    )];
    match std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => {
            let schema = agboss_core::store::types::random_id("agboss_usage");
            let a = PostgresStore::connect_with_schema(&url, &schema)
                .await
                .unwrap();
            let b = PostgresStore::connect_with_schema(&url, &schema)
                .await
                .unwrap();
            all.push(("postgres", SharedStore::new(a), SharedStore::new(b)));
        }
        _ if std::env::var_os("CI").is_some() => panic!("AGBOSS_TEST_POSTGRES_URL is not set"),
        _ => eprintln!("skipped PostgreSQL: AGBOSS_TEST_POSTGRES_URL not set"),
    }
    all
}

fn instance(
    store: SharedStore,
    window: &TenantUsageLimits,
    model: ScriptedModel,
    ran: &Arc<Ran>,
) -> App {
    builder(&Arc::new(model), ran)
        .store(store)
        .tenant_usage_limits(window.clone())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_share_one_tenant_window_exactly() {
    let dir = std::env::temp_dir().join(agboss_core::store::types::random_id("agboss-usage"));
    std::fs::create_dir_all(&dir).unwrap();
    let window = UsageLimits::new().tool_calls(10).per_tenant(DAY);
    for (backend, a, b) in store_pairs(&dir).await {
        let ran = Arc::new(Ran::default());
        let burst =
            || ScriptedModel::new([Turn::tool_calls(calls("slow-tool", 50)), Turn::text("done")]);
        let app_a = instance(a, &window, burst(), &ran);
        let app_b = instance(b.clone(), &window, burst(), &ran);
        let acme = || RunContext::new().tenant("acme");
        // 100 parallel calls of one tenant, 50 on each instance, against a window of 10.
        let (ra, rb) = tokio::join!(
            app_a.execute("busy-agent", "go", acme()),
            app_b.execute("busy-agent", "go", acme()),
        );
        assert_eq!(
            ran.count(),
            10,
            "{backend}: exactly 10 ran across both instances"
        );
        for result in [ra, rb] {
            let err = result.expect_err("each instance had calls refused");
            let refused = limit_error(&err);
            assert_eq!(
                (refused.limit.clone(), refused.max),
                (LimitKind::ToolCalls, 10),
                "{backend}"
            );
            assert_eq!(
                refused.window,
                Some(DAY),
                "{backend}: the tenant's window refused"
            );
        }
        // Another tenant's window is its own.
        let few = ScriptedModel::new([Turn::tool_calls(calls("slow-tool", 5)), Turn::text("done")]);
        let app_c = instance(b, &window, few, &ran);
        let out = app_c
            .execute("busy-agent", "go", RunContext::new().tenant("globex"))
            .await
            .unwrap_or_else(|e| panic!("{backend}: globex is not limited by acme: {e}"));
        assert_eq!(out.tool_calls, 5);
        assert_eq!(ran.count(), 15, "{backend}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_store_that_cannot_reserve_fails_the_call_closed() {
    let flaky = Arc::new(FlakyStore::new(MemoryStore::new()));
    let ran = Arc::new(Ran::default());
    let window = UsageLimits::new().tool_calls(10).per_tenant(DAY);
    let model = Arc::new(ScriptedModel::new([
        Turn::tool_calls(calls("slow-tool", 3)),
        Turn::text("done"),
    ]));
    let app = builder(&model, &ran)
        .store(Arc::clone(&flaky))
        .tenant_usage_limits(window)
        .build()
        .unwrap();
    flaky.fail_usage(true);
    let err = app
        .execute("busy-agent", "go", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(
        matches!(err.error(), RunError::Store(_)),
        "fails with the store's error: {err}"
    );
    assert_eq!(ran.count(), 0, "no call ran without its reservation");
    assert_eq!(model.request_count(), 1, "no model call after the refusal");

    // With model requests bounded, the model is not called either.
    let model = Arc::new(ScriptedModel::new([Turn::text("hi")]));
    let app = builder(&model, &ran)
        .store(Arc::clone(&flaky))
        .tenant_usage_limits(UsageLimits::new().model_requests(5).per_tenant(DAY))
        .build()
        .unwrap();
    let err = app
        .execute("busy-agent", "go", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(matches!(err.error(), RunError::Store(_)), "{err}");
    assert_eq!(model.request_count(), 0);
    flaky.fail_usage(false);
    app.execute("busy-agent", "go", RunContext::new().tenant("acme"))
        .await
        .expect("the store is back");
}

#[tokio::test]
async fn tenant_windows_need_a_store() {
    let model = Arc::new(ScriptedModel::new([Turn::text("hi")]));
    let ran = Arc::new(Ran::default());
    let built = builder(&model, &ran)
        .tenant_usage_limits(UsageLimits::new().tool_calls(1).per_tenant(DAY))
        .build();
    assert!(built.is_err());
}
