//! `portfolio`: one row per wallet × date × token.

use super::columns::{Declaration, Kind, optional, required};
use super::{Ctx, DecodeError, Decoded, HexCol};
use crate::api::types::PortfolioDay;
use crate::plan::UnitRange;
use crate::vocab::Dataset;
use crate::vocab::window::parse_date;
use arrow_array::builder::{Date32Builder, Float64Builder, Int64Builder, StringBuilder};
use std::sync::Arc;

/// The `portfolio` dataset.
pub const DECLARATION: Declaration = Declaration {
    dataset: Dataset::Portfolio,
    columns: &[
        required("chain", Kind::Text),
        required("wallet_address", Kind::Hex),
        required("date", Kind::Date),
        optional("balance", Kind::Float64),
        optional("balance_raw", Kind::Text),
        required("token_address", Kind::Hex),
        optional("token_decimals", Kind::Int64),
        optional("token_name", Kind::Text),
        optional("token_standard", Kind::Text),
        optional("token_symbol", Kind::Text),
    ],
    key: &["wallet_address", "date", "token_address"],
    partition_by: &["chain", "date"],
    lookups: Dataset::Portfolio.lookup_columns(),
    day: Some("date"),
    dictionary: &[
        "chain",
        "wallet_address",
        "token_address",
        "token_name",
        "token_standard",
        "token_symbol",
    ],
};

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
    let columns = vec![
        ("chain", Arc::new(chain.finish()) as _),
        ("wallet_address", wallet_col.finish()),
        ("date", Arc::new(date.finish()) as _),
        ("balance", Arc::new(balance.finish()) as _),
        ("balance_raw", Arc::new(balance_raw.finish()) as _),
        ("token_address", token_address.finish()),
        ("token_decimals", Arc::new(decimals.finish()) as _),
        ("token_name", Arc::new(name.finish()) as _),
        ("token_standard", Arc::new(standard.finish()) as _),
        ("token_symbol", Arc::new(symbol.finish()) as _),
    ];
    let batch = DECLARATION.batch(enc, columns).map_err(|e| ctx.err(0, "portfolio", e))?;
    Ok(Decoded {
        batch,
        days: Some(days),
        dropped,
    })
}
