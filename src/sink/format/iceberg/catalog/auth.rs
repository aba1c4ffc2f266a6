//! How requests to a catalog authenticate: none, a bearer token from a
//! variable, or OAuth2 client credentials exchanged for a token that is
//! refreshed before it expires (and once on a 401).
//!
//! Every secret read here — the client secret, each token — is registered
//! with [`crate::util::redact`] before it is sent anywhere; messages name
//! the variable, never its value.

use super::{CatalogError, Requests, read, server_message};
use crate::spec::CatalogAuth;
use crate::util::redact::{redact, register};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// A token is refreshed this long before it expires (or at four fifths
/// of its life, when that is shorter).
const REFRESH_AHEAD: Duration = Duration::from_secs(60);

/// A token is refreshed after this long at most, whatever lifetime its
/// answer gives.
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);

/// A token whose answer gives no lifetime is refreshed after this long.
const DEFAULT_TTL: Duration = Duration::from_secs(3600);

/// A catalog's authentication (its `Debug` names variables only).
pub enum Auth {
    /// None.
    None,
    /// A bearer token from `variable`.
    Token {
        /// Its variable's name.
        variable: String,
        /// The token.
        token: String,
    },
    /// OAuth2 client credentials from `variable`.
    Client {
        /// Its variable's name.
        variable: String,
        /// The client id.
        id: String,
        /// The client secret.
        secret: String,
        /// The token endpoint.
        endpoint: String,
        /// The scope asked for.
        scope: String,
        /// The token held, and when it is to be refreshed.
        held: Mutex<Option<(String, Instant)>>,
    },
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => f.write_str("Auth::None"),
            Auth::Token { variable, .. } => write!(f, "Auth::Token(${variable})"),
            Auth::Client { variable, endpoint, .. } => write!(f, "Auth::Client(${variable} at {endpoint})"),
        }
    }
}

impl Auth {
    /// The authentication `spec` names, its variable read now.
    pub fn from_spec(spec: &crate::spec::Catalog) -> Result<Auth, CatalogError> {
        let missing = |key: &str, v: &str, holds: &str| CatalogError::Credential {
            uri: spec.uri.clone(),
            message: format!("output.catalog.{key} names ${v}, which is not set: export {v}={holds}"),
        };
        match &spec.auth {
            CatalogAuth::None => Ok(Auth::None),
            CatalogAuth::Token(v) => {
                let token = std::env::var(v)
                    .ok()
                    .filter(|t| !t.trim().is_empty())
                    .ok_or_else(|| missing("token_env", v, "<token>"))?;
                register(token.trim());
                Ok(Auth::Token {
                    variable: v.clone(),
                    token: token.trim().to_string(),
                })
            }
            CatalogAuth::Credential(v) => {
                let value = std::env::var(v)
                    .ok()
                    .filter(|t| !t.trim().is_empty())
                    .ok_or_else(|| missing("credential_env", v, "<client_id>:<client_secret>"))?;
                let Some((id, secret)) = value.trim().split_once(':').filter(|(i, s)| !i.is_empty() && !s.is_empty()) else {
                    return Err(CatalogError::Credential {
                        uri: spec.uri.clone(),
                        message: format!("${v} (output.catalog.credential_env) must hold <client_id>:<client_secret>"),
                    });
                };
                register(secret);
                register(value.trim());
                // As the token request's form sends it.
                register(&form_urlencoded::byte_serialize(secret.as_bytes()).collect::<String>());
                Ok(Auth::Client {
                    variable: v.clone(),
                    id: id.to_string(),
                    secret: secret.to_string(),
                    endpoint: spec
                        .oauth2_server_uri
                        .clone()
                        .unwrap_or_else(|| format!("{}/v1/oauth/tokens", spec.uri)),
                    scope: spec.scope.clone(),
                    held: Mutex::new(None),
                })
            }
        }
    }

    /// Whether a 401 is worth a new token.
    pub(super) fn refreshes(&self) -> bool {
        matches!(self, Auth::Client { .. })
    }

    /// What to check after a refusal, naming the variable.
    pub(super) fn advice(&self) -> String {
        match self {
            Auth::None => "the catalog wants a credential: set output.catalog.credential_env or token_env".into(),
            Auth::Token { variable, .. } => format!("the catalog refused the token in ${variable} (output.catalog.token_env)"),
            Auth::Client { variable, .. } => {
                format!("the catalog refused the credential in ${variable} (output.catalog.credential_env), or its scope")
            }
        }
    }

    /// The bearer token to send (`None`: none); a new one where `renew`
    /// or the held one is due.
    pub(super) async fn token(
        &self,
        http: &reqwest::Client,
        uri: &str,
        requests: &Requests,
        renew: bool,
    ) -> Result<Option<String>, CatalogError> {
        match self {
            Auth::None => Ok(None),
            Auth::Token { token, .. } => Ok(Some(token.clone())),
            Auth::Client {
                variable,
                id,
                secret,
                endpoint,
                scope,
                held,
            } => {
                let mut held = held.lock().await;
                if let Some((t, due)) = held.as_ref()
                    && !renew
                    && Instant::now() < *due
                {
                    return Ok(Some(t.clone()));
                }
                let form: String = form_urlencoded::Serializer::new(String::new())
                    .append_pair("grant_type", "client_credentials")
                    .append_pair("client_id", id)
                    .append_pair("client_secret", secret)
                    .append_pair("scope", scope)
                    .finish();
                requests.session.fetch_add(1, Ordering::Relaxed);
                let rq = http
                    .post(endpoint)
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .header("Accept", "application/json")
                    .body(form);
                let a = read(rq).await.map_err(|m| CatalogError::Failed {
                    uri: uri.into(),
                    what: "OAuth2 token".into(),
                    message: m,
                })?;
                match a.status.as_u16() {
                    200 => {}
                    400 | 401 | 403 => {
                        return Err(CatalogError::Credential {
                            uri: uri.into(),
                            message: format!(
                                "the token endpoint refused the credential in ${variable} (output.catalog.credential_env): {} {}",
                                a.status.as_u16(),
                                server_message(&a.body)
                            ),
                        });
                    }
                    s => {
                        return Err(CatalogError::Failed {
                            uri: uri.into(),
                            what: "OAuth2 token".into(),
                            message: format!("{s} {}", server_message(&a.body)),
                        });
                    }
                }
                let v: serde_json::Value = serde_json::from_slice(&a.body).map_err(|e| CatalogError::Failed {
                    uri: uri.into(),
                    what: "OAuth2 token".into(),
                    message: redact(&format!("answer not JSON: {e}")).into_owned(),
                })?;
                let Some(token) = v.get("access_token").and_then(|t| t.as_str()).filter(|t| !t.is_empty()) else {
                    return Err(CatalogError::Failed {
                        uri: uri.into(),
                        what: "OAuth2 token".into(),
                        message: "the answer has no access_token".into(),
                    });
                };
                register(token);
                let ttl = v
                    .get("expires_in")
                    .and_then(|e| e.as_u64().or_else(|| e.as_str()?.parse().ok()))
                    .map_or(DEFAULT_TTL, Duration::from_secs)
                    .clamp(Duration::from_secs(1), MAX_TTL);
                let ahead = REFRESH_AHEAD.min(ttl / 5);
                *held = Some((token.to_string(), Instant::now() + ttl.saturating_sub(ahead)));
                Ok(Some(token.to_string()))
            }
        }
    }
}
