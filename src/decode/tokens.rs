//! `tokens`: one row per token contract.

use super::{Ctx, DecodeError, Decoded, HexCol, schema};
use crate::api::types::Token;
use crate::vocab::Dataset;
use arrow_array::ArrayRef;
use arrow_array::RecordBatch;
use arrow_array::builder::{Int64Builder, StringBuilder};
use std::sync::Arc;

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
    let columns: Vec<ArrayRef> = vec![
        Arc::new(chain.finish()),
        address.finish(),
        Arc::new(decimals.finish()),
        Arc::new(name.finish()),
        Arc::new(standard.finish()),
        Arc::new(symbol.finish()),
    ];
    let batch = RecordBatch::try_new(schema(Dataset::Tokens, enc), columns).map_err(|e| ctx.err(0, "address", e.to_string()))?;
    Ok(Decoded {
        batch,
        days: None,
        dropped: 0,
    })
}
