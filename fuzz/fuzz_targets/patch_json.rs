//! PATCH with a JSON patch (RFC 6902), as the server applies it
//! (`PatchType::Json`), then the patched object through the update strategy.
//!
//! Input: `<resource>\n<stored object as JSON>\0<patch body>`; see `kapi_fuzz::patch`.
#![no_main]

use kapi_apiserver::endpoints::patch::PatchType;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kapi_fuzz::patch(PatchType::Json, "application/json-patch+json", data);
});
