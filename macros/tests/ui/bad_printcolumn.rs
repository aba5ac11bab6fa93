use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kapi_macros::Resource;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Resource)]
#[resource(
    group = "example.kapi.dev",
    version = "v1",
    printcolumn(name = "Size", type = "text", json_path = ".spec.size"),
    printcolumn(name = "Color", type = "string"),
    printcolumn(name = "Age", type = "date", json_path = "spec.age", priority = "high")
)]
struct Widget {
    metadata: ObjectMeta,
}

fn main() {}
