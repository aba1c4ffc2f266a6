pub(crate) mod checkpoint_manifest;
