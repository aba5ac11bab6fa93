use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kapi_macros::Resource;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Resource)]
#[resource(
    group = "example.kapi.dev",
    version = "v1",
    status,
    scale(status_replicas_path = "status.replicas", label_selector = ".status.selector")
)]
struct Widget {
    metadata: ObjectMeta,
    status: Option<String>,
}

fn main() {}
