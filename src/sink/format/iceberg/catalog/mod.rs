//! An Iceberg REST catalog client: the protocol's requests over JSON,
//! with no knowledge of what the metadata means (the table module reads
//! and diffs it; see `table::catalog_commit`).
//!
//! # Protocol
//!
//! `GET <uri>/v1/config[?warehouse=W]` once, for the `prefix` (and a
//! `uri` override); then below `<uri>/v1/<prefix>/`: the namespace
//! (`GET`, created with `POST namespaces` where absent), and per table
//! `GET`/`POST namespaces/<ns>/tables[/<name>]` (load, create, commit)
//! and `POST namespaces/<ns>/register`.
//!
//! # Invariants
//!
//! - **A commit is sent once.** Its outcome is [`CommitOutcome`]: applied
//!   (the new metadata), refused by a requirement (409: nothing applied),
//!   or unknown (a 5xx, a timeout, a dropped connection: it may have been
//!   applied). The caller reloads and looks for its own commit before it
//!   sends another; this client never resends one.
//! - **Other requests are retried**, a bounded number of times, on
//!   connection errors, 429 and 5xx.
//! - **Secrets stay in memory.** The client secret and every token are
//!   registered with [`crate::util::redact`] before the first request;
//!   messages name the variable that holds them, never a value; a server's
//!   message is quoted redacted and cut short.
//! - **Bounded answers.** A body larger than [`MAX_BODY`] is an error.

mod auth;

pub use auth::Auth;

use crate::util::redact::redact;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::OnceCell;

/// The largest answer read (a table's metadata with its snapshots).
const MAX_BODY: usize = 256 << 20;

/// Attempts at a request other than a commit.
const ATTEMPTS: u32 = 5;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Errors of the catalog.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The catalog refused the credential, or it is missing: fix the
    /// environment (exit 2).
    #[error("iceberg catalog {uri}: {message}")]
    Credential {
        /// The catalog.
        uri: String,
        /// What is wrong, naming the variable.
        message: String,
    },
    /// The catalog cannot be used as configured (exit 2).
    #[error("iceberg catalog {uri}: {message}")]
    Config {
        /// The catalog.
        uri: String,
        /// What is wrong.
        message: String,
    },
    /// A request failed (worth retrying the run).
    #[error("iceberg catalog {uri}: {what}: {message}")]
    Failed {
        /// The catalog.
        uri: String,
        /// The request.
        what: String,
        /// The status or error, and the server's message.
        message: String,
    },
}

/// A table as the catalog holds it.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The metadata file the catalog points at.
    pub metadata_location: Option<String>,
    /// The metadata document.
    pub metadata: serde_json::Value,
}

/// What became of a commit.
#[derive(Debug)]
pub enum CommitOutcome {
    /// Applied: the table as it is now.
    Applied(Loaded),
    /// Refused by a requirement (409): nothing applied.
    Conflict(String),
    /// A 5xx, timeout or dropped connection: it may have been applied.
    Unknown(String),
}

/// Requests sent, by kind (for the report and `make bench`).
#[derive(Debug, Default)]
pub struct Requests {
    /// `GET /v1/config` and OAuth2 token requests.
    pub session: AtomicU64,
    /// Namespace checks and creations.
    pub namespace: AtomicU64,
    /// Table loads.
    pub load: AtomicU64,
    /// Table creations and registrations.
    pub create: AtomicU64,
    /// Commits.
    pub commit: AtomicU64,
}

impl Requests {
    /// Every request sent.
    pub fn total(&self) -> u64 {
        [&self.session, &self.namespace, &self.load, &self.create, &self.commit]
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }
}

/// A REST catalog, for one namespace.
#[derive(Debug)]
pub struct RestCatalog {
    http: Result<reqwest::Client, String>,
    uri: String,
    namespace: String,
    warehouse: Option<String>,
    /// Its `Err` is the message of a [`CatalogError::Credential`].
    auth: Result<Auth, String>,
    /// `<uri>/v1/<prefix>/namespaces/<ns>`, once the config is read and
    /// the namespace is there.
    base: OnceCell<String>,
    requests: Requests,
}

/// A request's answer: status and body.
struct Answer {
    status: reqwest::StatusCode,
    body: Vec<u8>,
}

impl RestCatalog {
    /// The catalog `spec` names; reads the credential's variable now. A
    /// missing variable (or an HTTP stack that cannot start) is the
    /// first request's error, naming the variable.
    pub fn new(spec: &crate::spec::Catalog) -> RestCatalog {
        crate::util::tls::install();
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            // A redirect would turn a commit into a GET, or send a token
            // request's body (the client secret) to another host.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("chainetl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| redact(&e.to_string()).into_owned());
        RestCatalog {
            http,
            uri: spec.uri.clone(),
            namespace: spec.namespace.clone(),
            warehouse: spec.warehouse.clone(),
            auth: Auth::from_spec(spec).map_err(|e| e.to_string()),
            base: OnceCell::new(),
            requests: Requests::default(),
        }
    }

    /// The process's one client of the catalog `spec` names: every
    /// output opened on it (a run's, its compaction's, its report's)
    /// shares the configuration read, the namespace check and the token.
    pub fn shared(spec: &crate::spec::Catalog) -> std::sync::Arc<RestCatalog> {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex};
        static SHARED: Mutex<Option<HashMap<crate::spec::Catalog, Arc<RestCatalog>>>> = Mutex::new(None);
        let mut all = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        all.get_or_insert_with(HashMap::new)
            .entry(spec.clone())
            .or_insert_with(|| Arc::new(RestCatalog::new(spec)))
            .clone()
    }

    /// The HTTP client and authentication, or why there are none.
    fn session(&self) -> Result<(&reqwest::Client, &Auth), CatalogError> {
        let http = self.http.as_ref().map_err(|m| CatalogError::Config {
            uri: self.uri.clone(),
            message: format!("cannot start an HTTP client: {m}"),
        })?;
        let auth = self.auth.as_ref().map_err(|m| CatalogError::Credential {
            uri: self.uri.clone(),
            message: m.split_once(": ").map_or(m.as_str(), |(_, rest)| rest).to_string(),
        })?;
        Ok((http, auth))
    }

    /// The catalog's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// `<namespace>.<table>`.
    pub fn identifier(&self, table: &str) -> String {
        format!("{}.{}", self.namespace, table_name(table))
    }

    /// Requests sent so far.
    pub fn requests(&self) -> &Requests {
        &self.requests
    }

    /// The table, or `None` where the catalog has none of that name.
    pub async fn load(&self, table: &str) -> Result<Option<Loaded>, CatalogError> {
        let url = format!("{}/tables/{}", self.base().await?, segment(&table_name(table)));
        self.requests.load.fetch_add(1, Ordering::Relaxed);
        let a = self.send_retried("load table", reqwest::Method::GET, &url, None).await?;
        match a.status.as_u16() {
            200 => self.loaded("load table", &a.body).map(Some),
            404 => Ok(None),
            _ => Err(self.failed("load table", &a)),
        }
    }

    /// Creates the table from `body` (name, location, schema, spec,
    /// properties). `None`: one of that name exists (made by another
    /// writer meanwhile).
    pub async fn create(&self, body: serde_json::Value) -> Result<Option<Loaded>, CatalogError> {
        let url = format!("{}/tables", self.base().await?);
        self.requests.create.fetch_add(1, Ordering::Relaxed);
        let a = self.send_once("create table", reqwest::Method::POST, &url, Some(&body)).await?;
        let a = match a {
            Ok(a) => a,
            // A creation whose answer was lost: the load that follows
            // finds it, made.
            Err(Lost(m)) => return Err(self.fail("create table", m)),
        };
        match a.status.as_u16() {
            200 => self.loaded("create table", &a.body).map(Some),
            409 => Ok(None),
            _ => Err(self.failed("create table", &a)),
        }
    }

    /// Registers the metadata file at `metadata_location` as `table`.
    /// `None`: a table of that name exists.
    pub async fn register(&self, table: &str, metadata_location: &str) -> Result<Option<Loaded>, CatalogError> {
        let url = format!("{}/register", self.base().await?);
        let body = serde_json::json!({"name": table_name(table), "metadata-location": metadata_location});
        self.requests.create.fetch_add(1, Ordering::Relaxed);
        let a = self
            .send_once("register table", reqwest::Method::POST, &url, Some(&body))
            .await?
            .map_err(|Lost(m)| self.fail("register table", m))?;
        match a.status.as_u16() {
            200 => self.loaded("register table", &a.body).map(Some),
            409 => Ok(None),
            _ => Err(self.failed("register table", &a)),
        }
    }

    /// Commits `updates` to `table` under `requirements`, once.
    pub async fn commit(
        &self,
        table: &str,
        requirements: Vec<serde_json::Value>,
        updates: Vec<serde_json::Value>,
    ) -> Result<CommitOutcome, CatalogError> {
        let name = table_name(table);
        let url = format!("{}/tables/{}", self.base().await?, segment(&name));
        let body = serde_json::json!({
            "identifier": {"namespace": [self.namespace], "name": name},
            "requirements": requirements,
            "updates": updates,
        });
        self.requests.commit.fetch_add(1, Ordering::Relaxed);
        let a = match self.send_once("commit", reqwest::Method::POST, &url, Some(&body)).await? {
            Ok(a) => a,
            Err(Lost(m)) => return Ok(CommitOutcome::Unknown(m)),
        };
        match a.status.as_u16() {
            // Applied, whatever the body says: an unreadable one leaves the
            // outcome to the reload.
            200 => Ok(match self.loaded("commit", &a.body) {
                Ok(l) => CommitOutcome::Applied(l),
                Err(e) => CommitOutcome::Unknown(e.to_string()),
            }),
            409 => Ok(CommitOutcome::Conflict(server_message(&a.body))),
            500..=599 => Ok(CommitOutcome::Unknown(format!("{} {}", a.status.as_u16(), server_message(&a.body)))),
            _ => Err(self.failed("commit", &a)),
        }
    }

    /// `<uri>/v1/<prefix>/namespaces/<ns>`: the config read and the
    /// namespace made, once per process.
    async fn base(&self) -> Result<&str, CatalogError> {
        self.base
            .get_or_try_init(|| async {
                self.session()?;
                let (root, prefix) = self.config().await?;
                let ns = format!(
                    "{root}/v1/{}namespaces",
                    prefix.map(|p| format!("{}/", segment(&p))).unwrap_or_default()
                );
                let this = format!("{ns}/{}", segment(&self.namespace));
                self.requests.namespace.fetch_add(1, Ordering::Relaxed);
                let a = self.send_retried("load namespace", reqwest::Method::GET, &this, None).await?;
                match a.status.as_u16() {
                    200 | 204 => {}
                    404 => {
                        let body = serde_json::json!({"namespace": [self.namespace], "properties": {}});
                        self.requests.namespace.fetch_add(1, Ordering::Relaxed);
                        let a = self
                            .send_once("create namespace", reqwest::Method::POST, &ns, Some(&body))
                            .await?
                            .map_err(|Lost(m)| self.fail("create namespace", m))?;
                        // 409: another writer made it meanwhile.
                        if !matches!(a.status.as_u16(), 200 | 409) {
                            return Err(self.failed("create namespace", &a));
                        }
                        tracing::info!(catalog = %self.uri, namespace = %self.namespace, "created the catalog namespace");
                    }
                    _ => return Err(self.failed("load namespace", &a)),
                }
                Ok::<_, CatalogError>(this)
            })
            .await
            .map(String::as_str)
    }

    /// The base URI and prefix `GET /v1/config` gives.
    async fn config(&self) -> Result<(String, Option<String>), CatalogError> {
        let mut url = url::Url::parse(&format!("{}/v1/config", self.uri)).map_err(|e| CatalogError::Config {
            uri: self.uri.clone(),
            message: e.to_string(),
        })?;
        if let Some(w) = &self.warehouse {
            url.query_pairs_mut().append_pair("warehouse", w);
        }
        self.requests.session.fetch_add(1, Ordering::Relaxed);
        let a = self.send_retried("config", reqwest::Method::GET, url.as_str(), None).await?;
        if a.status.as_u16() != 200 {
            let e = self.failed("config", &a);
            // A warehouse the catalog does not know, a path that is no
            // catalog: no retry fixes it.
            return Err(match (a.status.as_u16(), e) {
                (400 | 404, CatalogError::Failed { message, .. }) => CatalogError::Config {
                    uri: self.uri.clone(),
                    message: format!(
                        "GET /v1/config: {message} (is output.catalog.uri the catalog's base, and output.catalog.warehouse one it has?)"
                    ),
                },
                (_, e) => e,
            });
        }
        let v: serde_json::Value = serde_json::from_slice(&a.body).map_err(|e| self.fail("config", format!("not JSON: {e}")))?;
        let pick = |k: &str| {
            v.get("overrides")
                .and_then(|o| o.get(k))
                .or_else(|| v.get("defaults").and_then(|d| d.get(k)))
                .and_then(|x| x.as_str())
                .map(str::to_string)
        };
        let root = pick("uri").map_or_else(|| self.uri.clone(), |u| u.trim_end_matches('/').to_string());
        Ok((root, pick("prefix").filter(|p| !p.is_empty())))
    }

    fn loaded(&self, what: &str, body: &[u8]) -> Result<Loaded, CatalogError> {
        let mut v: serde_json::Value = serde_json::from_slice(body).map_err(|e| self.fail(what, format!("answer not JSON: {e}")))?;
        let metadata = v.get_mut("metadata").map(serde_json::Value::take).filter(|m| m.is_object());
        let Some(metadata) = metadata else {
            return Err(self.fail(what, "the answer has no table metadata"));
        };
        Ok(Loaded {
            metadata_location: v.get("metadata-location").and_then(|l| l.as_str()).map(str::to_string),
            metadata,
        })
    }

    fn failed(&self, what: &str, a: &Answer) -> CatalogError {
        if a.status.as_u16() == 401 || a.status.as_u16() == 403 {
            return CatalogError::Credential {
                uri: self.uri.clone(),
                message: format!(
                    "{what}: {} {}: {}",
                    a.status.as_u16(),
                    server_message(&a.body),
                    self.auth.as_ref().map_or_else(|m| m.clone(), Auth::advice)
                ),
            };
        }
        self.fail(what, format!("{} {}", a.status.as_u16(), server_message(&a.body)))
    }

    fn fail(&self, what: &str, message: impl Into<String>) -> CatalogError {
        CatalogError::Failed {
            uri: self.uri.clone(),
            what: what.into(),
            message: redact(&message.into()).into_owned(),
        }
    }

    /// Sends a request that changes nothing, retrying what may pass on
    /// a second try.
    async fn send_retried(
        &self,
        what: &str,
        method: reqwest::Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, CatalogError> {
        let mut last = String::new();
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(200 << attempt.min(5))).await;
            }
            match self.send_once(what, method.clone(), url, body).await? {
                Ok(a) if a.status.as_u16() == 429 || a.status.is_server_error() => {
                    last = format!("{} {}", a.status.as_u16(), server_message(&a.body));
                }
                Ok(a) => return Ok(a),
                Err(Lost(m)) => last = m,
            }
            tracing::debug!(catalog = %self.uri, request = what, attempt, error = %redact(&last), "catalog request failed; retrying");
        }
        Err(self.fail(what, format!("{last} (after {ATTEMPTS} attempts)")))
    }

    /// Sends one request with the current token; a 401 refreshes the
    /// token once and sends it again. `Ok(Err(Lost))`: no answer came;
    /// `Err`: no request could be sent (a credential refused or missing).
    async fn send_once(
        &self,
        what: &str,
        method: reqwest::Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Result<Answer, Lost>, CatalogError> {
        let (http, auth) = self.session()?;
        let mut refreshed = false;
        loop {
            let token = match auth.token(http, &self.uri, &self.requests, refreshed).await {
                Ok(t) => t,
                Err(e @ CatalogError::Failed { .. }) => return Ok(Err(Lost(e.to_string()))),
                Err(e) => return Err(e),
            };
            let mut rq = http.request(method.clone(), url).header("Accept", "application/json");
            if let Some(t) = &token {
                rq = rq.bearer_auth(t);
            }
            if let Some(b) = body {
                rq = rq.header("Content-Type", "application/json").body(b.to_string());
            }
            let answer = match read(rq).await {
                Ok(a) => a,
                Err(m) => return Ok(Err(Lost(format!("{what}: {m}")))),
            };
            if answer.status.as_u16() == 401 && token.is_some() && !refreshed && auth.refreshes() {
                refreshed = true;
                continue;
            }
            return Ok(Ok(answer));
        }
    }

    /// Whether an error is the environment's to fix.
    pub fn is_config(e: &CatalogError) -> bool {
        matches!(e, CatalogError::Credential { .. } | CatalogError::Config { .. })
    }
}

/// No answer came (connection refused or dropped, timeout).
struct Lost(String);

/// Sends `rq` and reads its answer, bounded by [`MAX_BODY`].
async fn read(rq: reqwest::RequestBuilder) -> Result<Answer, String> {
    let mut resp = rq.send().await.map_err(|e| redact(&describe(e)).into_owned())?;
    let status = resp.status();
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| redact(&describe(e)).into_owned())? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("answer larger than {} MiB", MAX_BODY >> 20));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer { status, body })
}

/// A reqwest error with its causes, without the URL's query.
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut out = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// The message of an error answer (`{"error": {"message"}}`, or OAuth2's
/// `error_description`), redacted and cut short.
fn server_message(body: &[u8]) -> String {
    let v: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let picked = v.as_ref().and_then(|v| {
        let e = v.get("error")?;
        e.get("message").and_then(|m| m.as_str()).map(str::to_string).or_else(|| {
            Some(format!(
                "{} {}",
                e.as_str()?,
                v.get("error_description").and_then(|d| d.as_str()).unwrap_or("")
            ))
        })
    });
    let text = picked.unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(64 << 10)]).into_owned());
    // Masked whole, then cut: a secret across the cut is masked too.
    redact(text.trim()).chars().take(300).collect()
}

/// A table's name in the catalog: its folder, `/` as `_` (decoded tables
/// live in one folder level).
fn table_name(rel: &str) -> String {
    crate::spec::Catalog::table_name(rel)
}

/// `s` as one path segment.
fn segment(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}
