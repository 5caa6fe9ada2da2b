//! A whole server's tools are made at run time: their registration data is owned by the app
//! that listed them (no leak), and freed with it.

use std::sync::Weak;

use super::*;
use agboss_core::contract::MetaRef;
use agboss_core::contract::tool::{RemoteMeta, ToolMeta};

/// Weak handles on the data of tools made at run time, and on their remote ends.
type Owned = (Vec<Weak<ToolMeta>>, Vec<Weak<dyn RemoteMeta>>);

/// [`Owned`] of every tool the app made at run time (its own tools and its agents').
fn owned_metas(app: &App) -> Owned {
    let bound = app
        .bound_tools()
        .chain(app.agents().flat_map(|a| a.tools.iter()));
    let mut metas = Vec::new();
    let mut remotes = Vec::new();
    for tool in bound {
        if let MetaRef::Shared(meta) = tool.meta_ref() {
            metas.push(Arc::downgrade(meta));
            if let Some(MetaRef::Shared(remote)) = &meta.mcp {
                remotes.push(Arc::downgrade(remote));
            }
        }
    }
    (metas, remotes)
}

#[tokio::test]
async fn a_whole_servers_tools_are_owned_by_the_app_and_freed_with_it() {
    let Some(server) = env::everything().await else {
        return;
    };
    let hooks = Arc::new(Hooks::default());
    let mut before: Option<Owned> = None;
    for round in 0..3 {
        let app = App::builder()
            .mcp_server(server.clone())
            .mcp_server_tools("everything")
            .provide_arc(Arc::clone(&hooks))
            .agent::<McpAgent>()
            .build()
            .unwrap();
        // The app before this one is dropped: nothing of its tools' data is left.
        if let Some((metas, remotes)) = before.take() {
            assert!(metas.iter().all(|m| m.upgrade().is_none()), "round {round}");
            assert!(
                remotes.iter().all(|r| r.upgrade().is_none()),
                "round {round}"
            );
        }
        let (metas, remotes) = owned_metas(&app);
        // Every tool of the server, held by the app (once as the app's, once as the agent's).
        let listed = server.tools().count();
        assert!(metas.len() >= listed, "{} < {listed}", metas.len());
        assert_eq!(remotes.len(), metas.len());

        // The tool still works end to end, under its own name and remote end.
        let handle = app.tool_by_name("everything__get-sum").unwrap();
        assert_eq!(handle.meta().name, "everything__get-sum");
        let remote = agboss_core::mcp::client::McpToolMeta::of(handle.meta()).unwrap();
        assert_eq!((remote.server, &*remote.remote), ("everything", "get-sum"));
        let out = handle
            .tenant("acme")
            .invoke_json(r#"{"a":1,"b":2}"#)
            .await
            .unwrap();
        assert!(out.contains("The sum of 1 and 2 is 3."), "{out}");

        before = Some((metas, remotes));
        drop(app);
    }
    let (metas, remotes) = before.unwrap();
    assert!(metas.iter().all(|m| m.upgrade().is_none()));
    assert!(remotes.iter().all(|r| r.upgrade().is_none()));
}
