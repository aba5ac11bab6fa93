//! Generated code under test: [`fixtures`] from `codegen/tests/schemas`, [`testdata`]
//! from every CRD in the shared testdata folder, and the conversion [`hooks`] a
//! fixture names.

pub mod fixtures {
    //! The snapshot fixtures.
    include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));
}

pub mod testdata {
    //! The real-world CRDs.
    include!(concat!(env!("OUT_DIR"), "/testdata.rs"));
}

pub mod hooks {
    //! The conversion hooks of `conversion.yaml`'s Gadget (v2 renames `owner` to
    //! `maintainer`, splits `endpoint` (`host:port`) in two and widens `weight`) and of
    //! `conversion_definitions.yaml`'s Pool (v1's `zone` is v2's `zones`).

    use kapi_core::conversion::Convert;

    use crate::fixtures::conv_example_com::{v1, v2};
    use crate::fixtures::io::example::pools;

    /// The hooks `conversion_definitions.yaml` names.
    pub struct PoolConversion;

    impl Convert<pools::v1::PoolSpec, pools::v2::PoolSpec> for PoolConversion {
        fn convert(from: &pools::v1::PoolSpec, to: &mut pools::v2::PoolSpec) {
            to.zones = from.zone.clone().map(|z| vec![z]);
        }
    }

    impl Convert<pools::v2::PoolSpec, pools::v1::PoolSpec> for PoolConversion {
        fn convert(from: &pools::v2::PoolSpec, to: &mut pools::v1::PoolSpec) {
            to.zone = from.zones.as_ref().and_then(|z| z.first().cloned());
            to.size = from.size.and_then(|s| i32::try_from(s).ok());
        }
    }

    /// The hooks the fixture names (`kapi.dev/conversion-hooks`).
    pub struct GadgetConversion;

    impl Convert<v1::GadgetSpec, v2::GadgetSpec> for GadgetConversion {
        fn convert(from: &v1::GadgetSpec, to: &mut v2::GadgetSpec) {
            to.maintainer.clone_from(&from.owner);
            if let Some((host, port)) = from.endpoint.as_deref().and_then(|e| e.rsplit_once(':')) {
                to.host = Some(host.to_string());
                to.port = port.parse().ok();
            }
        }
    }

    impl Convert<v2::GadgetSpec, v1::GadgetSpec> for GadgetConversion {
        fn convert(from: &v2::GadgetSpec, to: &mut v1::GadgetSpec) {
            to.owner.clone_from(&from.maintainer);
            if let (Some(host), Some(port)) = (&from.host, from.port) {
                to.endpoint = Some(format!("{host}:{port}"));
            }
            to.weight = from.weight.and_then(|w| i32::try_from(w).ok());
        }
    }
}
