//! A kube-rs controller for the Books of `examples/own-control-plane`: it shelves each
//! Book in the Library its `spec.library` names, writing `status.phase: Shelved` and
//! `status.shelvedIn`, or `Waiting` while that Library does not exist (and looks again
//! when one is created). It knows nothing of kapi: it is tested against
//! `kapi-test-server` (`tests/`), as it would be against envtest.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use serde_json::json;

/// The field manager of the status it writes.
pub const MANAGER: &str = "book-shelver";

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API answered with an error.
    #[error("{0}")]
    Kube(#[from] kube::Error),
}

/// The kinds it reads, as kube-rs's dynamic API names them.
pub fn kind(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk("books.example.com", "v1", kind))
}

struct Context {
    client: Client,
}

/// The status a Book gets: shelved where its Library is, waiting otherwise.
async fn reconcile(book: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, Error> {
    let library = book.data["spec"]["library"].as_str().unwrap_or_default();
    let libraries: Api<DynamicObject> = Api::all_with(ctx.client.clone(), &kind("Library"));
    let (status, action) = match libraries.get_opt(library).await? {
        Some(_) => (
            json!({"phase": "Shelved", "shelvedIn": library}),
            Action::await_change(),
        ),
        None => (
            json!({"phase": "Waiting"}),
            Action::requeue(Duration::from_millis(200)),
        ),
    };
    if book.data.get("status") != Some(&status) {
        let namespace = book.namespace().unwrap_or_default();
        let books: Api<DynamicObject> =
            Api::namespaced_with(ctx.client.clone(), &namespace, &kind("Book"));
        books
            .patch_status(
                &book.name_any(),
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(json!({"apiVersion": "books.example.com/v1", "kind": "Book",
                    "status": status})),
            )
            .await?;
    }
    Ok(action)
}

fn error_policy(_: Arc<DynamicObject>, _: &Error, _: Arc<Context>) -> Action {
    Action::requeue(Duration::from_millis(500))
}

/// Runs the controller over every namespace until its stream ends.
pub async fn run(client: Client) {
    let books: Api<DynamicObject> = Api::all_with(client.clone(), &kind("Book"));
    Controller::new_with(books, watcher::Config::default(), kind("Book"))
        .run(reconcile, error_policy, Arc::new(Context { client }))
        .for_each(|_| async {})
        .await;
}
