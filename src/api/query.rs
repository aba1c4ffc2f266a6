//! The queries of the list endpoints, and how they become URL parameters.

/// Sort order of list endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// Oldest first.
    Earliest,
    /// Newest first (the service default).
    Latest,
}

/// Query of `GET /blocks`.
#[derive(Debug, Clone, Default)]
pub struct BlocksQuery {
    /// Explicit block numbers (≤ 1000).
    pub numbers: Option<Vec<u64>>,
    /// Window in service form.
    pub window: Option<String>,
    /// Order.
    pub sort: Option<Sort>,
    /// Page size (1..=1000).
    pub limit: Option<u32>,
    /// Cursor from the previous page.
    pub cursor: Option<String>,
}

/// Query of `GET /events`.
#[derive(Debug, Clone, Default)]
pub struct EventsQuery {
    /// Contract filter.
    pub contract_address: Option<String>,
    /// topic0 hashes or ABI signatures.
    pub signatures: Vec<String>,
    /// Window in service form.
    pub window: Option<String>,
    /// Order.
    pub sort: Option<Sort>,
    /// Page size (1..=1000).
    pub limit: Option<u32>,
    /// Cursor from the previous page.
    pub cursor: Option<String>,
}

/// Query of `GET /wallets/{w}/portfolio/daily`.
#[derive(Debug, Clone, Default)]
pub struct PortfolioQuery {
    /// Token filter.
    pub token_address: Option<String>,
    /// Window in service form.
    pub window: Option<String>,
    /// Page size (1..=31).
    pub limit: Option<u32>,
    /// Cursor from the previous page.
    pub cursor: Option<String>,
}

/// Adds the parameters every list query shares.
pub(super) fn push_common(
    params: &mut Vec<(&str, String)>,
    window: &Option<String>,
    sort: Option<Sort>,
    limit: Option<u32>,
    cursor: &Option<String>,
) {
    if let Some(w) = window {
        params.push(("window", w.clone()));
    }
    if let Some(s) = sort {
        params.push(("sort_by", if s == Sort::Earliest { "earliest" } else { "latest" }.into()));
    }
    if let Some(l) = limit {
        params.push(("limit", l.to_string()));
    }
    if let Some(c) = cursor {
        params.push(("cursor", c.clone()));
    }
}
