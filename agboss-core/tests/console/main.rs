//! The console in a real browser (headless Chromium over WebDriver): a gated call pauses a run,
//! the inbox shows its ticket (input masked and escaped), a click approves it, and the run's
//! page follows the resumed run live to its end, the tool having run once; a reject with a
//! message while a clerk, refused, follows the run live; another tenant sees nothing, also by
//! URL; a forged POST changes nothing; an invalid edit shows the field error and leaves the
//! ticket pending; a thread's page shows its messages.
mod browser;
#[path = "../tickets/fixture.rs"]
mod fixture;
mod http;
mod pages;
mod paging;

use std::sync::Arc;

use agboss_core::console::{ConsoleTokens, ConsoleUser};
use agboss_core::prelude::{App, Approver, RunContext};
use agboss_core::store::{MemoryStore, NewThread, SharedStore, SqliteStore, TicketState};
use browser::{
    browser, click, completed, post_from_page, screenshot, serve, text_of, wait_for, webdriver,
};
use fantoccini::Locator;
use fixture::{IxLog, desk, manager, pending_refund, pending_refund_in};

fn tokens() -> ConsoleTokens {
    ConsoleTokens::new()
        .token("t-acme-manager", ConsoleUser::new("acme", manager("acme")))
        .token(
            "t-acme-clerk",
            ConsoleUser::new("acme", Approver::new("sam").role("clerk")),
        )
        .token(
            "t-globex-manager",
            ConsoleUser::new("globex", manager("globex")),
        )
        .token(
            "t-acme-auditor",
            ConsoleUser::new("acme", Approver::new("ana").role("auditor")).reveal_input(true),
        )
}

fn app() -> (App, Arc<IxLog>) {
    let log = Arc::new(IxLog::default());
    (
        desk(SharedStore::new(MemoryStore::new()), Arc::clone(&log)),
        log,
    )
}

fn row(ticket_id: &str) -> String {
    format!(r#"tr[data-ticket="{ticket_id}"]"#)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_in_the_inbox_resumes_the_run_and_the_tool_runs_once() {
    let Some(webdriver) = webdriver() else { return };
    // On the SQLite store (the others run on the memory store).
    let dir = std::env::temp_dir().join(agboss_core::store::types::random_id("console"));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteStore::open(dir.join("console.db")).await.unwrap();
    let log = Arc::new(IxLog::default());
    let app = desk(SharedStore::new(store), Arc::clone(&log));
    let note = "<script>window.pwned = 1</script> write to jane@example.com";
    let ticket = pending_refund(&app, "acme", &format!("A-1 5000 {note}")).await;
    let base = serve(&app, tokens()).await;
    let client = browser(&webdriver, &base, "t-acme-manager").await;

    let text = text_of(&client, &row(&ticket.id)).await;
    assert!(
        text.contains("ix-refund-tool") && text.contains("ix-manager-channel"),
        "{text}"
    );
    // The guards that allowed the call before it waited for a manager.
    let guards = text_of(&client, &format!("{} td.guards", row(&ticket.id))).await;
    assert_eq!(guards, "ix-limit-tool-interceptor");
    // The input is masked as the model's path masks it, and escaped: the note's markup is text.
    let source = client.source().await.unwrap();
    assert!(
        !source.contains("jane@example.com"),
        "the raw e-mail is not shown"
    );
    assert!(
        source.contains("&lt;script&gt;window.pwned"),
        "the markup is escaped"
    );
    let scripts = client.find_all(Locator::Css("script")).await.unwrap();
    assert_eq!(scripts.len(), 1, "only the console's own script");
    let pwned = client
        .execute("return window.pwned === undefined", vec![])
        .await
        .unwrap();
    assert_eq!(pwned, serde_json::Value::Bool(true));
    screenshot(&client, "inbox-escaped").await;

    click(&client, &format!("{} button.approve", row(&ticket.id))).await;
    completed(&client).await;
    let output = text_of(&client, "#output").await;
    assert!(output.contains("refunded 5000 on A-1"), "{output}");
    screenshot(&client, "run").await;
    assert_eq!(
        log.refunds(),
        [("A-1".to_string(), 5000)],
        "the tool ran once"
    );
    let stored = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(stored.state, TicketState::Completed);

    // The app page: the resolved tree, the refund tool's chain under the desk agent.
    click(&client, "header a[href$='/app']").await;
    let tree = text_of(&client, "#structure").await;
    assert!(
        tree.contains("ix-desk-agent") && tree.contains("ix-refund-tool"),
        "{tree}"
    );
    assert_eq!(tree, app.describe().trim_end(), "the page shows describe()");
    screenshot(&client, "app").await;

    client.goto(&base).await.unwrap();
    wait_for(&client, "#empty").await;
    client.close().await.unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clerk_is_refused_and_a_manager_rejects_with_a_message() {
    let Some(webdriver) = webdriver() else { return };
    let (app, log) = app();
    let ticket = pending_refund(&app, "acme", "A-2 7000 thanks").await;
    let base = serve(&app, tokens()).await;

    let clerk = browser(&webdriver, &base, "t-acme-clerk").await;
    let approve = format!("{} button.approve", row(&ticket.id));
    wait_for(&clerk, &approve).await;
    click(&clerk, &approve).await;
    let refused = text_of(&clerk, "#message").await;
    assert!(
        refused.contains("You may not decide this ticket"),
        "{refused}"
    );
    let still = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(still.state, TicketState::Pending);
    assert!(still.decision.is_none());
    // The clerk follows the paused run's page: it goes on live once someone decides.
    clerk
        .goto(&format!("{base}/runs/{}", ticket.run_id))
        .await
        .unwrap();
    wait_for(&clerk, "#live").await;
    let waiting = text_of(&clerk, "#steps").await;
    assert!(waiting.contains("waits for approval"), "{waiting}");

    let manager = browser(&webdriver, &base, "t-acme-manager").await;
    let message = format!("{} input[name=message]", row(&ticket.id));
    let input = wait_for(&manager, &message).await;
    screenshot(&manager, "inbox").await;
    input.send_keys("no receipt attached").await.unwrap();
    click(&manager, &format!("{} button.reject", row(&ticket.id))).await;
    completed(&manager).await;
    let output = text_of(&manager, "#output").await;
    assert!(output.contains("no receipt attached"), "{output}");
    assert!(log.refunds().is_empty(), "a rejected call never runs");
    manager.close().await.unwrap();

    // The clerk's page streamed the resumed run to its end, then showed its answer.
    completed(&clerk).await;
    let steps = text_of(&clerk, "#steps").await;
    assert!(steps.contains("rejected_by_approver"), "{steps}");
    clerk.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tenant_sees_nothing_a_forged_post_and_an_invalid_edit_change_nothing() {
    let Some(webdriver) = webdriver() else { return };
    let (app, log) = app();
    let thread = app
        .threads("acme")
        .create(NewThread::new().title("Refund A-3"))
        .await
        .unwrap();
    let ctx = RunContext::new().tenant("acme").thread(&thread.id);
    let ticket = pending_refund_in(&app, ctx, "A-3 9000 thanks").await;
    let base = serve(&app, tokens()).await;

    // Tenant B: an empty inbox, and acme's ticket, run and thread are not found by URL either.
    let globex = browser(&webdriver, &base, "t-globex-manager").await;
    wait_for(&globex, "#empty").await;
    let paths = [
        format!("/tickets/{}", ticket.id),
        format!("/runs/{}", ticket.run_id),
        format!("/threads/{}", thread.id),
    ];
    for path in paths {
        globex.goto(&format!("{base}{path}")).await.unwrap();
        let page = text_of(&globex, "#message").await;
        assert!(page.contains("There is nothing here"), "{path}: {page}");
    }
    let status = post_from_page(&globex, &format!("/tickets/{}/approve", ticket.id), "").await;
    assert_eq!(status, 403, "no CSRF token");
    globex.close().await.unwrap();

    // Acme's manager: a POST without the page's CSRF token (or with a forged one) is refused.
    let acme = browser(&webdriver, &base, "t-acme-manager").await;
    wait_for(&acme, &row(&ticket.id)).await;
    let approve = format!("/tickets/{}/approve", ticket.id);
    assert_eq!(post_from_page(&acme, &approve, "").await, 403);
    assert_eq!(post_from_page(&acme, &approve, "csrf=forged").await, 403);
    let pending = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(pending.state, TicketState::Pending);
    assert!(pending.decision.is_none() && log.refunds().is_empty());

    // An invalid edit shows the field error; the ticket stays pending.
    acme.goto(&format!("{base}/tickets/{}", ticket.id))
        .await
        .unwrap();
    let amount = wait_for(&acme, "#field-amountCents").await;
    amount.clear().await.unwrap();
    amount.send_keys("0").await.unwrap();
    screenshot(&acme, "ticket").await;
    click(&acme, "#edit button.save").await;
    let errors = text_of(&acme, "#errors").await;
    assert!(errors.contains("amountCents"), "{errors}");
    // The error is the field's, beside it, and the field is marked invalid.
    let beside = text_of(&acme, "#field-amountCents + .field-error").await;
    assert!(!beside.is_empty(), "the field's error");
    let invalid = wait_for(&acme, "#field-amountCents").await;
    assert_eq!(
        invalid.attr("aria-invalid").await.unwrap().as_deref(),
        Some("true")
    );
    let typed = invalid.prop("value").await.unwrap();
    assert_eq!(
        typed.as_deref(),
        Some("0"),
        "the field keeps what was typed"
    );
    screenshot(&acme, "ticket-invalid-edit").await;
    let pending = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(pending.state, TicketState::Pending);
    assert!(pending.decision.is_none());
    assert!(log.refunds().is_empty(), "nothing ran");

    // A valid edit runs the approver's input, once.
    let amount = wait_for(&acme, "#field-amountCents").await;
    amount.clear().await.unwrap();
    amount.send_keys("4500").await.unwrap();
    click(&acme, "#edit button.save").await;
    completed(&acme).await;
    assert_eq!(log.refunds(), [("A-3".to_string(), 4500)]);

    // The thread's page: the request, the call's observation and the answer.
    acme.goto(&format!("{base}/threads/{}", thread.id))
        .await
        .unwrap();
    let messages = text_of(&acme, "#messages").await;
    assert!(messages.contains("A-3 9000 thanks"), "{messages}");
    assert!(messages.contains("refunded 4500 on A-3"), "{messages}");
    screenshot(&acme, "thread").await;
    acme.close().await.unwrap();
}
