//! CustomResourceDefinition documents. (in progress)
