//! [`PriceTable`]: what each model's tokens cost, for a cost bound of
//! [`UsageLimits`](super::UsageLimits).
use std::collections::BTreeMap;

/// The price of one model's tokens, in micro-dollars (millionths of the currency unit) per
/// million tokens: `$3 / Mtok` is `3_000_000`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Price {
    /// Per million prompt tokens.
    pub input_micros_per_mtok: u64,
    /// Per million generated tokens.
    pub output_micros_per_mtok: u64,
}

impl Price {
    /// A price from its per-million-token rates, in micro-dollars.
    pub fn per_mtok(input_micros: u64, output_micros: u64) -> Self {
        Self {
            input_micros_per_mtok: input_micros,
            output_micros_per_mtok: output_micros,
        }
    }

    /// What `input` prompt and `output` generated tokens cost, in millionths of a
    /// micro-dollar (exact: no rounding per call), saturating.
    pub(crate) fn cost_pico(&self, input: u64, output: u64) -> u64 {
        input
            .saturating_mul(self.input_micros_per_mtok)
            .saturating_add(output.saturating_mul(self.output_micros_per_mtok))
    }
}

/// Prices by model name (the name a [`ChatModel`](crate::model::ChatModel) requests,
/// [`model_name`](crate::model::ChatModel::model_name)); set on
/// [`AppBuilder::prices`](crate::AppBuilder::prices). A run with a cost bound refuses a call
/// of a model the table has no price for (fail closed: its cost could not be counted).
///
/// ```
/// use agboss_core::engine::{Price, PriceTable};
/// let prices = PriceTable::new()
///     .price("gpt-4o-mini", Price::per_mtok(150_000, 600_000))
///     .price("claude-sonnet-4-5", Price::per_mtok(3_000_000, 15_000_000));
/// assert_eq!(prices.get("gpt-4o-mini"), Some(Price::per_mtok(150_000, 600_000)));
/// assert_eq!(prices.get("unknown"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PriceTable(BTreeMap<String, Price>);

impl PriceTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets `model`'s price.
    #[must_use]
    pub fn price(mut self, model: impl Into<String>, price: Price) -> Self {
        self.0.insert(model.into(), price);
        self
    }
    /// `model`'s price, if the table has one.
    pub fn get(&self, model: &str) -> Option<Price> {
        self.0.get(model).copied()
    }
}
