//! PATCH with a server-side apply configuration in YAML, merged by the strategy's
//! schema as the server applies it (`PatchType::Apply`), then the patched object through
//! the update strategy; and the configuration created, as apply creates a missing object.
//!
//! Input: `<resource>\n<stored object as JSON>\0<patch body>`; see `kapi_fuzz::patch`.
#![no_main]

use kapi_apiserver::endpoints::patch::PatchType;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kapi_fuzz::patch(PatchType::Apply, "application/apply-patch+yaml", data);
});
