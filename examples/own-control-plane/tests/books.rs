//! The control plane of `src/lib.rs` in a test server: its two kinds served beside
//! Namespaces and RBAC only, its CEL rule, its Rust hook and its status subresource
//! answering in kube's words through kube-rs.

use kapi_test_server::TestServer;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::json;

fn kind(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk("books.example.com", "v1", kind))
}

fn book(name: &str, isbn: &str, pages: i64) -> DynamicObject {
    DynamicObject::new(name, &kind("Book")).data(json!({"spec": {
        "title": "On Computable Numbers", "isbn": isbn, "library": "central", "pages": pages}}))
}

/// The message of the API error a refused write gets.
fn refusal(result: Result<DynamicObject, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(status)) => status.message,
        other => panic!("not refused: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn books_and_libraries_are_served_with_their_rules() {
    let server = TestServer::builder()
        .builtins(|_| false)
        .resources(kapi_example_own_control_plane::register_all)
        .start()
        .await
        .expect("the control plane starts");
    let client = server.client();
    let libraries: Api<DynamicObject> = Api::all_with(client.clone(), &kind("Library"));
    let central = DynamicObject::new("central", &kind("Library"))
        .data(json!({"spec": {"city": "Cambridge"}}));
    libraries
        .create(&PostParams::default(), &central)
        .await
        .expect("a Library");

    let books: Api<DynamicObject> = Api::default_namespaced_with(client.clone(), &kind("Book"));
    books
        .create(&PostParams::default(), &book("turing", "9780306406157", 36))
        .await
        .expect("a Book");
    // The Rust hook: the check digit.
    let message = refusal(
        books
            .create(&PostParams::default(), &book("typo", "9780306406158", 36))
            .await,
    );
    assert!(
        message.contains(
            "spec.isbn: Invalid value: \"9780306406158\": the check digit does not match"
        ),
        "{message}"
    );
    // The CEL rule.
    let message = refusal(
        books
            .create(&PostParams::default(), &book("empty", "9780306406157", 0))
            .await,
    );
    assert!(
        message.contains("spec: Invalid value: \"object\": a book has pages"),
        "{message}"
    );
    // The status subresource.
    let shelved = books
        .patch_status(
            "turing",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Shelved", "shelvedIn": "central"}})),
        )
        .await
        .expect("status written");
    assert_eq!(shelved.data["status"]["phase"], "Shelved");

    // Namespaces and RBAC are there; nothing else of the built-ins.
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .get("default")
        .await
        .expect("the default namespace");
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::default_namespaced(client);
    assert!(pods.list(&Default::default()).await.is_err());
    server.stop().await.expect("a clean stop");
}
