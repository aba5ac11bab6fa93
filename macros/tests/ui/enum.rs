use kapi_macros::Resource;
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Resource)]
#[resource(group = "example.kapi.dev", version = "v1")]
enum Widget {
    Small,
    Large,
}

fn main() {}
