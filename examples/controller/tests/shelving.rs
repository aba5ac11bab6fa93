//! The controller against `kapi-test-server`, as a controller's tests run against
//! envtest: the control plane of `examples/own-control-plane` started in process, the
//! controller running on its client, Books created and their status waited for; on
//! the embedded store, and (feature `etcd`) over an etcd cluster started here.

use std::time::Instant;

use kapi_example_controller::{kind, run};
use kapi_test_server::{Builder, TestServer};
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::json;

fn control_plane() -> Builder {
    TestServer::builder()
        .builtins(|_| false)
        .resources(kapi_example_own_control_plane::register_all)
}

fn phase_is(phase: &'static str) -> impl Fn(Option<&DynamicObject>) -> bool {
    move |b: Option<&DynamicObject>| b.is_some_and(|b| b.data["status"]["phase"] == phase)
}

/// A Book waits for its Library, then is shelved in it.
async fn shelves_books(server: TestServer) {
    let began = Instant::now();
    let controller = tokio::spawn(run(server.client()));
    let books: Api<DynamicObject> = Api::default_namespaced_with(server.client(), &kind("Book"));
    let book = DynamicObject::new("turing", &kind("Book")).data(json!({"spec": {
        "title": "On Computable Numbers", "isbn": "9780306406157", "library": "central"}}));
    books
        .create(&PostParams::default(), &book)
        .await
        .expect("a Book");
    server
        .wait_for(&books, "turing", phase_is("Waiting"))
        .await
        .expect("waiting for its library");
    let libraries: Api<DynamicObject> = Api::all_with(server.client(), &kind("Library"));
    let central = DynamicObject::new("central", &kind("Library"))
        .data(json!({"spec": {"city": "Cambridge"}}));
    libraries
        .create(&PostParams::default(), &central)
        .await
        .expect("a Library");
    server
        .wait_for(&books, "turing", phase_is("Shelved"))
        .await
        .expect("shelved");
    let shelved = books.get("turing").await.expect("the Book");
    assert_eq!(shelved.data["status"]["shelvedIn"], "central");
    controller.abort();
    server.stop().await.expect("a clean stop");
    eprintln!("the controller test took {:?}", began.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shelves_books_on_the_embedded_store() {
    shelves_books(control_plane().start().await.expect("started")).await;
}

#[cfg(feature = "etcd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shelves_books_over_etcd() {
    let etcd = kapi_testing::EtcdProcess::start();
    let server = control_plane()
        .etcd(&[&etcd.endpoint()])
        .start()
        .await
        .expect("started over etcd");
    shelves_books(server).await;
}
