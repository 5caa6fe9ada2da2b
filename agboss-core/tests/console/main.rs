//! The console in a real browser (headless Chromium over WebDriver): a gated call pauses a run,
//! the inbox shows its ticket (input masked and escaped), a click approves it, and the run's
//! page follows the resumed run live to its end, the tool having run once; a reject with a
//! message; a clerk refused; another tenant sees nothing, also by URL; a forged POST changes
//! nothing; an invalid edit shows the field error and leaves the ticket pending.
mod browser;
#[path = "../tickets/fixture.rs"]
mod fixture;

use std::sync::Arc;

use agboss_core::console::{ConsoleTokens, ConsoleUser};
use agboss_core::store::{MemoryStore, SharedStore, TicketState};
use agboss_core::{App, Approver};
use browser::{browser, post_from_page, screenshot, serve, wait_for, webdriver};
use fantoccini::Locator;
use fixture::{IxLog, desk, manager, pending_refund};

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
    let (app, log) = app();
    let note = "<script>window.pwned = 1</script> write to jane@example.com";
    let ticket = pending_refund(&app, "acme", &format!("A-1 5000 {note}")).await;
    let base = serve(&app, tokens()).await;
    let client = browser(&webdriver, &base, "t-acme-manager").await;

    let shown = wait_for(&client, &row(&ticket.id)).await;
    let text = shown.text().await.unwrap();
    assert!(
        text.contains("ix-refund-tool") && text.contains("ix-manager-channel"),
        "{text}"
    );
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
    screenshot(&client, "inbox").await;

    let approve = format!("{} button.approve", row(&ticket.id));
    client
        .find(Locator::Css(&approve))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    // The run's page follows the resumed run to its end (live, then reloaded).
    wait_for(&client, r#"#status[data-status="completed"]"#).await;
    let output = client
        .find(Locator::Css("#output"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(output.contains("refunded 5000 on A-1"), "{output}");
    screenshot(&client, "run").await;
    assert_eq!(
        log.refunds(),
        [("A-1".to_string(), 5000)],
        "the tool ran once"
    );
    let stored = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(stored.state, TicketState::Completed);

    // The inbox is empty now; the thread-less run has its steps journaled.
    client.goto(&base).await.unwrap();
    wait_for(&client, "#empty").await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clerk_is_refused_and_a_manager_rejects_with_a_message() {
    let Some(webdriver) = webdriver() else { return };
    let (app, log) = app();
    let ticket = pending_refund(&app, "acme", "A-2 7000 thanks").await;
    let base = serve(&app, tokens()).await;

    let clerk = browser(&webdriver, &base, "t-acme-clerk").await;
    let approve = format!("{} button.approve", row(&ticket.id));
    wait_for(&clerk, &approve).await.click().await.unwrap();
    let refused = wait_for(&clerk, "#message").await.text().await.unwrap();
    assert!(
        refused.contains("You may not decide this ticket"),
        "{refused}"
    );
    let still = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(still.state, TicketState::Pending);
    // The clerk follows the paused run's page: it goes on live once someone decides.
    clerk
        .goto(&format!("{base}/runs/{}", ticket.run_id))
        .await
        .unwrap();
    wait_for(&clerk, "#live").await;
    let waiting = clerk
        .find(Locator::Css("#steps"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(waiting.contains("waits for approval"), "{waiting}");

    let manager = browser(&webdriver, &base, "t-acme-manager").await;
    let message = format!("{} input[name=message]", row(&ticket.id));
    let input = wait_for(&manager, &message).await;
    input.send_keys("no receipt attached").await.unwrap();
    let reject = format!("{} button.reject", row(&ticket.id));
    manager
        .find(Locator::Css(&reject))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&manager, r#"#status[data-status="completed"]"#).await;
    let output = manager
        .find(Locator::Css("#output"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(output.contains("no receipt attached"), "{output}");
    assert!(log.refunds().is_empty(), "a rejected call never runs");
    manager.close().await.unwrap();
    // The clerk's page streamed the resumed run to its end, then showed its answer.
    wait_for(&clerk, r#"#status[data-status="completed"]"#).await;
    let steps = clerk
        .find(Locator::Css("#steps"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(steps.contains("rejected_by_approver"), "{steps}");
    clerk.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tenant_sees_nothing_a_forged_post_and_an_invalid_edit_change_nothing() {
    let Some(webdriver) = webdriver() else { return };
    let (app, log) = app();
    let ticket = pending_refund(&app, "acme", "A-3 9000 thanks").await;
    let base = serve(&app, tokens()).await;

    // Tenant B: an empty inbox, and acme's ticket and run are not found by URL either.
    let globex = browser(&webdriver, &base, "t-globex-manager").await;
    wait_for(&globex, "#empty").await;
    for path in [
        format!("/tickets/{}", ticket.id),
        format!("/runs/{}", ticket.run_id),
    ] {
        globex.goto(&format!("{base}{path}")).await.unwrap();
        let page = wait_for(&globex, "#message").await.text().await.unwrap();
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
    assert_eq!(
        app.tickets("acme").get(&ticket.id).await.unwrap().state,
        TicketState::Pending
    );

    // An invalid edit shows the field error; the ticket stays pending.
    acme.goto(&format!("{base}/tickets/{}", ticket.id))
        .await
        .unwrap();
    let amount = wait_for(&acme, "#field-amountCents").await;
    amount.clear().await.unwrap();
    amount.send_keys("0").await.unwrap();
    screenshot(&acme, "ticket").await;
    acme.find(Locator::Css("#edit button.save"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let errors = wait_for(&acme, "#errors").await.text().await.unwrap();
    assert!(errors.contains("amountCents"), "{errors}");
    assert_eq!(
        app.tickets("acme").get(&ticket.id).await.unwrap().state,
        TicketState::Pending
    );

    // A valid edit runs the approver's input, once.
    let amount = wait_for(&acme, "#field-amountCents").await;
    amount.clear().await.unwrap();
    amount.send_keys("4500").await.unwrap();
    acme.find(Locator::Css("#edit button.save"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&acme, r#"#status[data-status="completed"]"#).await;
    assert_eq!(log.refunds(), [("A-3".to_string(), 4500)]);
    acme.close().await.unwrap();
}
