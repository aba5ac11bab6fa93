//! Generated code under test: [`fixtures`] from `codegen/tests/schemas`, [`testdata`]
//! from every CRD in the shared testdata folder.

pub mod fixtures {
    //! The snapshot fixtures.
    include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));
}

pub mod testdata {
    //! The real-world CRDs.
    include!(concat!(env!("OUT_DIR"), "/testdata.rs"));
}
