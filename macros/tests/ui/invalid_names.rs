use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kapi_macros::Resource;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Resource)]
#[resource(
    group = "Example.com",
    version = "1",
    kind = "widget",
    plural = "Widgets",
    singular = "",
    list_kind = "Widget-List",
    shortname = "w_d",
    category = ""
)]
struct Widget {
    metadata: ObjectMeta,
}

fn main() {}
