//! `tokens`: one row per token contract.

use super::columns::{Declaration, Kind, optional, required};
use super::{Ctx, DecodeError, Decoded, HexCol};
use crate::api::types::Token;
use crate::vocab::Dataset;
use arrow_array::builder::{Int64Builder, StringBuilder};
use std::sync::Arc;

/// The `tokens` dataset.
pub const DECLARATION: Declaration = Declaration {
    dataset: Dataset::Tokens,
    columns: &[
        required("chain", Kind::Text),
        required("address", Kind::Hex),
        optional("decimals", Kind::Int64),
        optional("name", Kind::Text),
        optional("standard", Kind::Text),
        optional("symbol", Kind::Text),
    ],
    key: &["address"],
    partition_by: &["chain"],
    lookups: Dataset::Tokens.lookup_columns(),
    day: None,
    dictionary: &["chain", "name", "standard", "symbol"],
};

/// Decodes looked-up tokens; `requested` is the address each was asked for
/// (used when the record omits its own address).
pub fn decode(ctx: Ctx<'_>, tokens: &[(String, Token)]) -> Result<Decoded, DecodeError> {
    let enc = ctx.enc;
    let mut chain = StringBuilder::new();
    let mut address = HexCol::new(enc, tokens.len());
    let mut decimals = Int64Builder::new();
    let mut name = StringBuilder::new();
    let mut standard = StringBuilder::new();
    let mut symbol = StringBuilder::new();
    for (row, (requested, t)) in tokens.iter().enumerate() {
        chain.append_value(ctx.unit.chain.name());
        address
            .append(Some(t.address.as_deref().unwrap_or(requested)))
            .map_err(|m| ctx.err(row, "address", m))?;
        decimals.append_option(t.decimals.map(|v| v.0));
        name.append_option(t.name.as_deref());
        standard.append_option(t.standard.as_deref());
        symbol.append_option(t.symbol.as_deref());
    }
    let columns = vec![
        ("chain", Arc::new(chain.finish()) as _),
        ("address", address.finish()),
        ("decimals", Arc::new(decimals.finish()) as _),
        ("name", Arc::new(name.finish()) as _),
        ("standard", Arc::new(standard.finish()) as _),
        ("symbol", Arc::new(symbol.finish()) as _),
    ];
    let batch = DECLARATION.batch(enc, columns).map_err(|e| ctx.err(0, "address", e))?;
    Ok(Decoded {
        batch,
        days: None,
        dropped: 0,
    })
}
