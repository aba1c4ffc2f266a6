//! `[output.catalog]` and `[output.table_properties]`: the Iceberg REST
//! catalog commits go through, and what each table's properties hold.
//!
//! Secrets are named, never written: `credential_env` and `token_env`
//! name variables, and a value that is not a variable's name (a key
//! pasted in its place) is refused without being repeated.

use super::Validator;
use crate::spec::raw::{RawCatalog, RawOutput};
use crate::spec::{Catalog, CatalogAuth, OutputFormat};
use std::collections::BTreeMap;
use toml::Spanned;

/// The table-property prefix chainetl keeps for its own records.
const RESERVED_PREFIX: &str = "chainetl.";

impl Validator<'_> {
    /// `[output.catalog]`, where given: refused for a format other than
    /// Iceberg.
    pub(super) fn catalog(&mut self, o: &RawOutput, format: OutputFormat) -> Option<Catalog> {
        let raw = o.catalog.as_ref()?;
        if format != OutputFormat::Iceberg {
            self.err(
                raw.span(),
                "output.catalog",
                "applies only to format = \"iceberg\" (a catalog holds Iceberg tables)",
            );
            return None;
        }
        let c = raw.get_ref();
        if let Some(k) = &c.kind
            && k.get_ref() != "rest"
        {
            self.err(
                k.span(),
                "output.catalog.type",
                format!("`{}`: expected rest (an Iceberg REST catalog)", super::short(k.get_ref())),
            );
        }
        let uri = self.http_uri(&c.uri, "output.catalog.uri").unwrap_or_default();
        let oauth2_server_uri = self.http_uri(&c.oauth2_server_uri, "output.catalog.oauth2_server_uri");
        let namespace = c.namespace.as_ref().map(|n| n.get_ref().trim().to_string()).unwrap_or_default();
        if let Some(n) = &c.namespace
            && (namespace.is_empty() || namespace.len() > 128 || !namespace.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            self.err(
                n.span(),
                "output.catalog.namespace",
                "expected a namespace name (letters, digits, `_`), e.g. `chain`: tables are <namespace>.<table>",
            );
        }
        let auth = self.catalog_auth(c);
        let scope = c.scope.as_ref().map_or_else(|| "catalog".to_string(), |s| s.get_ref().clone());
        if scope.trim().is_empty() {
            let span = c.scope.as_ref().map_or(0..0, |s| s.span());
            self.err(span, "output.catalog.scope", "must not be empty (default: catalog)");
        }
        Some(Catalog {
            uri,
            namespace,
            warehouse: c.warehouse.as_ref().map(|w| w.get_ref().clone()),
            auth,
            oauth2_server_uri,
            scope,
        })
    }

    /// An `http(s)://` URI without credentials in it, trailing `/` off.
    fn http_uri(&mut self, v: &Option<Spanned<String>>, key: &str) -> Option<String> {
        let v = v.as_ref()?;
        let uri = v.get_ref().trim().trim_end_matches('/').to_string();
        match url::Url::parse(&uri) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
                if u.query().is_some() || u.fragment().is_some() {
                    self.err(
                        v.span(),
                        key,
                        "must not hold a query or fragment (a token there would be printed): name it in token_env",
                    );
                }
                if !u.username().is_empty() || u.password().is_some() {
                    self.err(
                        v.span(),
                        key,
                        "holds a user or password: name the variable holding the credential in credential_env instead",
                    );
                }
                Some(uri)
            }
            _ => {
                self.err(
                    v.span(),
                    key,
                    "expected an http:// or https:// URI, e.g. https://catalog.example.com/api/catalog",
                );
                None
            }
        }
    }

    /// `credential_env` or `token_env`, at most one, each a variable's name.
    fn catalog_auth(&mut self, c: &RawCatalog) -> CatalogAuth {
        let mut named = |v: &Option<Spanned<String>>, key: &str| -> Option<String> {
            let v = v.as_ref()?;
            let n = v.get_ref();
            let is_name = !n.is_empty()
                && n.len() <= 256
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !n.as_bytes()[0].is_ascii_digit();
            if !is_name {
                // Not repeated: what is pasted here is often the secret itself.
                self.err(
                    v.span(),
                    format!("output.catalog.{key}"),
                    "is not an environment variable name: it names the variable holding the secret, it is not the secret \
                     (e.g. CATALOG_CREDENTIAL)",
                );
                return None;
            }
            Some(n.clone())
        };
        let credential = named(&c.credential_env, "credential_env");
        let token = named(&c.token_env, "token_env");
        match (credential, token) {
            (Some(_), Some(_)) => {
                let span = c.token_env.as_ref().map_or(0..0, |t| t.span());
                self.err(
                    span,
                    "output.catalog.token_env",
                    "give credential_env (OAuth2 client credentials) or token_env (a bearer token), not both",
                );
                CatalogAuth::None
            }
            (Some(c), None) => CatalogAuth::Credential(c),
            (None, Some(t)) => CatalogAuth::Token(t),
            (None, None) => CatalogAuth::None,
        }
    }

    /// `[output.table_properties]`: Iceberg only; chainetl's own keys are
    /// its to write.
    pub(super) fn table_properties(&mut self, o: &RawOutput, format: OutputFormat) -> BTreeMap<String, String> {
        let Some(raw) = &o.table_properties else {
            return BTreeMap::new();
        };
        if format != OutputFormat::Iceberg {
            self.err(
                raw.span(),
                "output.table_properties",
                "applies only to format = \"iceberg\" (they are Iceberg table properties)",
            );
            return BTreeMap::new();
        }
        let mut out = BTreeMap::new();
        for (k, v) in raw.get_ref() {
            if k.trim().is_empty() || k.starts_with(RESERVED_PREFIX) || k == crate::spec::defaults::ICEBERG_NAME_MAPPING {
                self.err(
                    v.span(),
                    "output.table_properties",
                    format!(
                        "`{}`: keys under {RESERVED_PREFIX} and the name mapping are chainetl's to write",
                        super::short(k)
                    ),
                );
                continue;
            }
            if let Err(why) = crate::spec::defaults::check_iceberg_property(k, v.get_ref()) {
                self.err(v.span(), format!("output.table_properties.\"{k}\""), why);
                continue;
            }
            out.insert(k.clone(), v.get_ref().clone());
        }
        out
    }
}
