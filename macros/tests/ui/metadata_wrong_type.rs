use kapi_macros::Resource;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Resource)]
#[resource(group = "example.kapi.dev", version = "v1", schema = widget_schema)]
struct Widget {
    metadata: String,
}

fn widget_schema() -> &'static kapi_core::schema::Schema {
    unimplemented!()
}

fn main() {}
