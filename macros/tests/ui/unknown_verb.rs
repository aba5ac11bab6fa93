use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kapi_macros::Resource;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Resource)]
#[resource(group = "example.kapi.dev", version = "v1", verb = "get", verb = "read")]
struct Widget {
    metadata: ObjectMeta,
}

fn main() {}
