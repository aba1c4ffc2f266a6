//! Opening an output location: a URI (local path, `file:///abs`, or
//! `s3://bucket/prefix`) becomes an object store, a key prefix and, on
//! local disk, the directory itself.

use super::{OpenError, Storage};
use crate::spec::Output;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use std::path::PathBuf;
use std::sync::Arc;

/// Upload part size on local disk: how much a file being written holds in
/// memory before its bytes go to its staging file.
const LOCAL_PART_BYTES: usize = 1024 * 1024;
/// Upload part size on object stores: S3 needs at least 5 MiB per part.
const STORE_PART_BYTES: usize = 5 * 1024 * 1024;

impl Storage {
    /// Opens `output.uri`: a local path, `file:///abs`, or `s3://bucket/prefix`
    /// (credentials and endpoint from the standard AWS variables).
    pub fn open(output: &Output) -> Result<Storage, OpenError> {
        let uri = output.uri.as_str();
        let (store, prefix, local_root, conditional) = match uri.strip_prefix("s3://") {
            Some(rest) => {
                let (store, prefix, conditional) = open_s3(output, rest)?;
                (store, prefix, None, conditional)
            }
            None => {
                let (store, dir) = open_local(uri)?;
                (store, String::new(), Some(dir), true)
            }
        };
        let mut storage = Storage::build(output, store, prefix, local_root);
        storage.creates_conditionally = conditional;
        Ok(storage)
    }

    /// An output on an object store built by the caller (an S3 client with
    /// its own credentials, an in-memory store), writing under `prefix`.
    /// `output.uri` only names it in messages. Its state is written the
    /// object-store way (single PUTs, conditional PUTs for leases), whatever
    /// the store keeps its objects in.
    pub fn with_store(output: &Output, store: Arc<dyn ObjectStore>, prefix: &str) -> Storage {
        Storage::build(output, store, prefix.trim_matches('/').to_string(), None)
    }

    fn build(output: &Output, store: Arc<dyn ObjectStore>, prefix: String, local_root: Option<PathBuf>) -> Storage {
        let part_bytes = if local_root.is_some() { LOCAL_PART_BYTES } else { STORE_PART_BYTES };
        let fence = Arc::new(super::fence::Fence::default());
        // Local outputs are locked by the OS, which no other process takes
        // while this one lives: no fence to check.
        let fenced: Arc<dyn ObjectStore> = if local_root.is_some() {
            store.clone()
        } else {
            Arc::new(super::fence::FencedStore {
                inner: store.clone(),
                fence: fence.clone(),
            })
        };
        Storage {
            store: fenced,
            unfenced: store,
            fence,
            versions: Default::default(),
            prefix,
            local_root,
            uri: output.uri.clone(),
            part_bytes,
            creates_conditionally: true,
        }
    }
}

/// A configuration error of the output `uri`.
fn config(uri: &str, message: &str, source: Option<Box<dyn std::error::Error + Send + Sync>>) -> OpenError {
    OpenError {
        uri: uri.into(),
        message: message.into(),
        source,
    }
}

/// `s3://<rest>`: the bucket's store, the key prefix, and whether it
/// creates objects conditionally (not when `AWS_CONDITIONAL_PUT=disabled`
/// says the store cannot).
fn open_s3(output: &Output, rest: &str) -> Result<(Arc<dyn ObjectStore>, String, bool), OpenError> {
    let uri = output.uri.as_str();
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(config(uri, "no bucket in the URI: expected s3://bucket/prefix", None));
    }
    crate::util::tls::install();
    let mut b = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
    if let Some(e) = &output.endpoint {
        b = b.with_endpoint(e);
    }
    if let Some(r) = &output.region {
        b = b.with_region(r);
    } else if std::env::var("AWS_REGION").is_err() && std::env::var("AWS_DEFAULT_REGION").is_err() {
        b = b.with_region("us-east-1");
    }
    if let Some(h) = output.allow_http {
        b = b.with_allow_http(h);
    }
    // Fail within about a minute when the endpoint is unreachable,
    // rather than hanging.
    use object_store::ClientConfigKey as C;
    use object_store::aws::AmazonS3ConfigKey as K;
    b = b
        .with_config(K::Client(C::ConnectTimeout), "5s")
        .with_config(K::Client(C::Timeout), "60s");
    let conditional = b
        .get_config_value(&K::ConditionalPut)
        .is_none_or(|v| !v.eq_ignore_ascii_case("disabled"));
    let store = b
        .with_retry(object_store::RetryConfig {
            max_retries: 5,
            retry_timeout: std::time::Duration::from_secs(60),
            ..Default::default()
        })
        .build()
        .map_err(|e| config(uri, "cannot configure the S3 client", Some(Box::new(e))))?;
    Ok((Arc::new(store), prefix.trim_matches('/').to_string(), conditional))
}

/// A local path or `file://` URI: its store and its canonical directory
/// (created if missing).
fn open_local(uri: &str) -> Result<(Arc<dyn ObjectStore>, PathBuf), OpenError> {
    let dir = PathBuf::from(uri.strip_prefix("file://").unwrap_or(uri));
    std::fs::create_dir_all(&dir).map_err(|e| config(uri, "cannot create the directory", Some(Box::new(e))))?;
    let dir = dir
        .canonicalize()
        .map_err(|e| config(uri, "cannot resolve the directory", Some(Box::new(e))))?;
    let store = LocalFileSystem::new_with_prefix(&dir).map_err(|e| config(uri, "cannot open the directory", Some(Box::new(e))))?;
    Ok((Arc::new(store), dir))
}
