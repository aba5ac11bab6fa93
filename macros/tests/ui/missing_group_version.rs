use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kapi_macros::Resource;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Resource)]
#[resource(kind = "Widget")]
struct Widget {
    metadata: ObjectMeta,
}

fn main() {}
