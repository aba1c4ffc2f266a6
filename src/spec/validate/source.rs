//! `[source]` and `[source.sim]`: where the data comes from and how hard
//! the client may press the service.

use super::Validator;
use crate::spec::raw::{RawSim, RawSource};
use crate::spec::{BaseUrl, SimOptions, Source, defaults};
use std::time::Duration;

impl Validator<'_> {
    pub(super) fn source(&mut self, s: &RawSource) -> Source {
        let url = s.base_url.as_ref().map(|u| u.get_ref().trim().to_string()).unwrap_or_default();
        let base_url = if url == "sim" {
            BaseUrl::Sim(s.sim.as_ref().map(|x| self.sim(x.get_ref())).unwrap_or_default())
        } else {
            if let Some(b) = &s.base_url
                && (!(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10)
            {
                self.err(
                    b.span(),
                    "source.base_url",
                    format!("`{url}` is not a service URL: expected http(s)://host or \"sim\""),
                );
            }
            if let Some(x) = &s.sim {
                self.err(x.span(), "source.sim", "applies only when base_url = \"sim\"");
            }
            BaseUrl::Http(url)
        };
        let mut api_key_env_at = String::new();
        if let Some(env) = &s.api_key_env {
            let n = env.get_ref();
            let (line, col) = crate::spec::error::line_col(self.text, env.span().start);
            api_key_env_at = format!("{}:{line}:{col}", self.file);
            if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                // The value is not repeated: what is pasted here is often the key.
                self.err(
                    env.span(),
                    "source.api_key_env",
                    "this is not an environment variable's name (letters, digits and _; the value is not repeated \
                     here, in case it is the key): api_key_env names the variable that holds the key, \
                     e.g. api_key_env = \"CHAINETL_API_KEY\" after export CHAINETL_API_KEY=<the key>",
                );
            }
        }
        let rps = match &s.requests_per_second {
            Some(r) if !(r.get_ref().is_finite() && *r.get_ref() > 0.0 && *r.get_ref() <= 100_000.0) => {
                self.err(
                    r.span(),
                    "source.requests_per_second",
                    format!("must be a number above 0 and at most 100000, got {}", r.get_ref()),
                );
                None
            }
            Some(r) => Some(*r.get_ref()),
            None => None,
        };
        let max_concurrency = self.int_in(
            &s.max_concurrency,
            "source.max_concurrency",
            1,
            1024,
            defaults::MAX_CONCURRENCY as i64,
        );
        let page_size = self.int_in(&s.page_size, "source.page_size", 1, 1000, i64::from(defaults::PAGE_SIZE));
        let timeout_secs = self.int_in(&s.timeout_secs, "source.timeout_secs", 1, 3600, defaults::TIMEOUT_SECS as i64);
        let max_retries = self.int_in(&s.max_retries, "source.max_retries", 0, 100, defaults::MAX_RETRIES as i64);
        let max_response_mb = self.int_in(
            &s.max_response_mb,
            "source.max_response_mb",
            1,
            4096,
            defaults::MAX_RESPONSE_MB as i64,
        );
        let max_retry_after_secs = self.int_in(
            &s.max_retry_after_secs,
            "source.max_retry_after_secs",
            0,
            3600,
            defaults::MAX_RETRY_AFTER_SECS as i64,
        );
        Source {
            base_url,
            api_key_env: s.api_key_env.as_ref().map(|e| e.get_ref().clone()),
            api_key_env_at,
            max_concurrency: max_concurrency as usize,
            requests_per_second: rps,
            page_size: page_size as u32,
            timeout: Duration::from_secs(timeout_secs as u64),
            max_retries: max_retries as usize,
            max_response_bytes: (max_response_mb as u64) << 20,
            max_retry_after: Duration::from_secs(max_retry_after_secs as u64),
        }
    }

    /// `[source.sim]`: checked here, with the simulator's own bounds, so a
    /// bad setting fails `validate` (exit 2) rather than every `run` (exit 1).
    fn sim(&mut self, r: &RawSim) -> SimOptions {
        let mut o = SimOptions::default();
        let key = |k: &str| format!("source.sim.{k}");
        macro_rules! copy {
            ($($f:ident),*) => { $( if let Some(v) = &r.$f { o.$f = v.get_ref().clone(); } )* };
        }
        copy!(
            seed,
            events_per_block,
            latency_ms,
            freeze_head,
            inclusive_end,
            topics_as_numbers,
            scan_budget,
            reorg_depth
        );
        for (name, v, field) in [
            ("error_rate", &r.error_rate, &mut o.error_rate),
            ("reset_rate", &r.reset_rate, &mut o.reset_rate),
            ("truncate_rate", &r.truncate_rate, &mut o.truncate_rate),
        ] {
            if let Some(v) = v {
                let x = *v.get_ref();
                if (0.0..=1.0).contains(&x) {
                    *field = x;
                } else {
                    self.err(v.span(), key(name), format!("must be a share from 0 to 1, got {x}"));
                }
            }
        }
        if let Some(v) = &r.quota_rps {
            let x = *v.get_ref();
            if x.is_finite() && x >= 0.0 {
                o.quota_rps = x;
            } else {
                self.err(
                    v.span(),
                    key("quota_rps"),
                    format!("must be a number of requests a second, 0 (no quota) or more, got {x}"),
                );
            }
        }
        if let Some(v) = &r.frozen_at {
            match crate::vocab::window::parse_instant(v.get_ref()) {
                Ok(_) => o.frozen_at = Some(v.get_ref().clone()),
                Err(m) => self.err(v.span(), key("frozen_at"), m),
            }
        }
        if let Some(v) = &r.api_key {
            let k = v.get_ref();
            if k.is_empty() || k.chars().any(char::is_control) {
                // The value is a key: never echoed.
                self.err(v.span(), key("api_key"), "must be non-empty, without control characters");
            } else {
                o.api_key = Some(k.clone());
            }
        }
        for entry in r.forbid.iter().flat_map(|l| l.get_ref()) {
            match crate::spec::parse_forbid(entry.get_ref()) {
                Ok(_) => o.forbid.push(entry.get_ref().clone()),
                Err(m) => self.err(entry.span(), key("forbid"), m),
            }
        }
        o
    }
}
