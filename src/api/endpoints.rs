//! The service's endpoints, typed: one method per v2 endpoint, each
//! building its path and parameters and reading its documented response.

use super::outcome::Parser;
use super::query::push_common;
use super::types::*;
use super::{ApiError, BlocksQuery, Client, Endpoint, EventsQuery, PortfolioQuery, Resource};
use crate::vocab::chain::Chain;

impl Client {
    /// `GET /v2/{chain}/blocks`.
    pub async fn blocks(&self, chain: Chain, q: &BlocksQuery) -> Result<BlocksPage, ApiError> {
        let mut params = Vec::new();
        if let Some(n) = &q.numbers {
            params.push(("numbers", n.iter().map(u64::to_string).collect::<Vec<_>>().join(",")));
        }
        push_common(&mut params, &q.window, q.sort, q.limit, &q.cursor);
        self.get(at(chain, Endpoint::Blocks), &format!("/v2/{chain}/blocks"), &params).await
    }

    /// `GET /v2/{chain}/blocks/{number}` (`None`: latest).
    pub async fn block(&self, chain: Chain, number: Option<u64>) -> Result<Block, ApiError> {
        let n = number.map(|n| n.to_string()).unwrap_or_else(|| "latest".into());
        let r: BlockResponse = self
            .get(at(chain, Endpoint::Blocks), &format!("/v2/{chain}/blocks/{n}"), &[])
            .await?;
        Ok(r.block)
    }

    /// `GET /v2/{chain}/events`. The page borrows from the response body, so
    /// it is handed to `read` (straight into Arrow builders, in the
    /// exporter) rather than returned.
    pub async fn events<T>(&self, chain: Chain, q: &EventsQuery, read: impl Fn(EventsPage<'_>) -> T + Sync) -> Result<T, ApiError> {
        let mut params = Vec::new();
        if let Some(c) = &q.contract_address {
            params.push(("contract_address", c.clone()));
        }
        if !q.signatures.is_empty() {
            params.push(("signatures", q.signatures.join(",")));
        }
        push_common(&mut params, &q.window, q.sort, q.limit, &q.cursor);
        let parse = |body: &[u8]| super::read_events_page(body).map(&read);
        let parser = Parser {
            parse: &parse,
            locate: &|body: &[u8]| {
                let mut de = serde_json::Deserializer::from_slice(body);
                serde_path_to_error::deserialize::<_, EventsPage<'_>>(&mut de)
                    .err()
                    .map(|e| e.path().to_string())
            },
        };
        self.get_with(at(chain, Endpoint::Events), &format!("/v2/{chain}/events"), &params, parser)
            .await
    }

    /// `GET /v2/{chain}/wallets/{wallet}/portfolio/daily`.
    pub async fn portfolio(&self, chain: Chain, wallet: &str, q: &PortfolioQuery) -> Result<PortfolioPage, ApiError> {
        let mut params = Vec::new();
        if let Some(t) = &q.token_address {
            params.push(("token_address", t.clone()));
        }
        push_common(&mut params, &q.window, None, q.limit, &q.cursor);
        self.get(
            at(chain, Endpoint::Portfolio),
            &format!("/v2/{chain}/wallets/{wallet}/portfolio/daily"),
            &params,
        )
        .await
    }

    /// `GET /v2/{chain}/tokens/{address}`; `Ok(None)` when the service
    /// answers its documented "no such token": a 404 whose JSON error code
    /// is `not_found`. Any other 404 (a wrong base URL path, a proxy's
    /// page) is an error naming the URL, never "no such token".
    pub async fn token(&self, chain: Chain, address: &str) -> Result<Option<Token>, ApiError> {
        match self
            .get::<TokenResponse>(at(chain, Endpoint::Tokens), &format!("/v2/{chain}/tokens/{address}"), &[])
            .await
        {
            Ok(r) => Ok(Some(r.token)),
            Err(ApiError::Rejected {
                status: 404,
                code: Some(c),
                ..
            }) if c == "not_found" => Ok(None),
            Err(e) => Err(e),
        }
    }
}

fn at(chain: Chain, endpoint: Endpoint) -> Resource {
    Resource { chain, endpoint }
}
