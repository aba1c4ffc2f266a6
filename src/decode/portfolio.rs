//! `portfolio`: one row per wallet × date × token.

use super::{Ctx, DecodeError, Decoded, HexCol, schema};
use crate::api::types::PortfolioDay;
use crate::plan::UnitRange;
use crate::vocab::Dataset;
use crate::vocab::window::parse_date;
use arrow_array::ArrayRef;
use arrow_array::RecordBatch;
use arrow_array::builder::{Date32Builder, Float64Builder, Int64Builder, StringBuilder};
use std::sync::Arc;

/// Decodes a page of portfolio days. A day is owned when its midnight lies
/// in the unit's half-open interval.
pub fn decode(ctx: Ctx<'_>, days_in: &[PortfolioDay]) -> Result<Decoded, DecodeError> {
    let UnitRange::Wallet { wallet, start, end } = &ctx.unit.range else {
        return Err(ctx.err(0, "portfolio", "not a wallet unit"));
    };
    let enc = ctx.enc;
    let mut chain = StringBuilder::new();
    let mut wallet_col = HexCol::new(enc, 0);
    let mut date = Date32Builder::new();
    let mut balance = Float64Builder::new();
    let mut balance_raw = StringBuilder::new();
    let mut token_address = HexCol::new(enc, 0);
    let mut decimals = Int64Builder::new();
    let mut name = StringBuilder::new();
    let mut standard = StringBuilder::new();
    let mut symbol = StringBuilder::new();
    let mut days = Vec::new();
    let mut dropped = 0;
    for (row, d) in days_in.iter().enumerate() {
        let text = ctx.required(row, "date", &d.date)?;
        let day = parse_date(text).ok_or_else(|| ctx.err(row, "date", format!("`{text}` is not a YYYY-MM-DD date")))?;
        let midnight = day as i64 * 86_400;
        if !(*start..*end).contains(&midnight) {
            dropped += d.holdings.as_ref().map_or(0, Vec::len);
            continue;
        }
        for h in d.holdings.iter().flatten() {
            let token = ctx.required(row, "token", &h.token)?;
            chain.append_value(ctx.unit.chain.name());
            wallet_col.append(Some(wallet)).map_err(|m| ctx.err(row, "wallet_address", m))?;
            date.append_value(day);
            days.push(day);
            balance.append_option(h.balance.map(|b| b.0));
            match &h.balance_raw {
                Some(raw) if !raw.0.is_empty() && raw.0.bytes().all(|c| c.is_ascii_digit()) => balance_raw.append_value(&raw.0),
                Some(raw) => {
                    return Err(ctx.err(row, "balance_raw", format!("`{}` is not a decimal integer", raw.0)));
                }
                None => balance_raw.append_null(),
            }
            token_address
                .append(Some(ctx.required(row, "token.address", &token.address)?))
                .map_err(|m| ctx.err(row, "token.address", m))?;
            decimals.append_option(token.decimals.map(|v| v.0));
            name.append_option(token.name.as_deref());
            standard.append_option(token.standard.as_deref());
            symbol.append_option(token.symbol.as_deref());
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(chain.finish()),
        wallet_col.finish(),
        Arc::new(date.finish()),
        Arc::new(balance.finish()),
        Arc::new(balance_raw.finish()),
        token_address.finish(),
        Arc::new(decimals.finish()),
        Arc::new(name.finish()),
        Arc::new(standard.finish()),
        Arc::new(symbol.finish()),
    ];
    let batch = RecordBatch::try_new(schema(Dataset::Portfolio, enc), columns).map_err(|e| ctx.err(0, "portfolio", e.to_string()))?;
    Ok(Decoded {
        batch,
        days: Some(days),
        dropped,
    })
}
