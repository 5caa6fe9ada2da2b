//! Behaviour of `#[derive(Dto)]`: wire names, schema, validation of typed values and of JSON.
use agboss_core::dto::{Dto, FieldError, JsonPath, ValidationError};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

mod decoding;
mod properties;
mod schema;
mod validation;
mod wire;

/// Counts the allocations of the current thread, to check the hot path allocates nothing.
struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct OrderLine {
    #[text(prompt = "Stock keeping unit", pattern = "^SKU-[0-9]+$")]
    pub sku: String,
    #[integer(prompt = "How many", min = 1, max = 99)]
    pub quantity: u32,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct CreateOrder {
    #[text(prompt = "Order reference", min_length = 3, max_length = 12)]
    pub order_id: String,
    #[text(prompt = "Shipping speed", choices = ["standard", "express"])]
    pub shipping_speed: String,
    #[nested(prompt = "Order lines", min_items = 1, max_items = 3)]
    pub lines: Vec<OrderLine>,
    #[number(prompt = "Discount in percent", min = 0, max = 50.5)]
    pub discount_pct: Option<f64>,
    #[boolean(prompt = "Gift wrap?")]
    pub gift_wrap: bool,
    #[text(prompt = "Tags", max_length = 5, max_items = 2)]
    pub tags: Option<Vec<String>>,
    #[integer(prompt = "Priority", min = -5)]
    pub priority: i64,
    #[nested(prompt = "Billing address")]
    pub billing: Option<Address>,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Address {
    #[text(prompt = "Street and number", min_length = 1)]
    pub street_line: String,
    #[text(prompt = "ISO country code", pattern = "^[A-Z]{2}$")]
    pub country: String,
}

#[derive(Dto, Debug, Clone, PartialEq)]
pub struct Small {
    #[integer(prompt = "A byte")]
    pub byte: u8,
    #[integer(prompt = "A signed byte", max = 100)]
    pub signed: Option<i8>,
    #[number(prompt = "A float")]
    pub ratio: Option<f32>,
    #[text(prompt = "Raw identifier field")]
    pub r#type: Option<String>,
}

fn order() -> CreateOrder {
    CreateOrder {
        order_id: "A-17".into(),
        shipping_speed: "express".into(),
        lines: vec![OrderLine {
            sku: "SKU-1".into(),
            quantity: 2,
        }],
        discount_pct: None,
        gift_wrap: true,
        tags: Some(vec!["red".into()]),
        priority: 0,
        billing: Some(Address {
            street_line: "Main St 1".into(),
            country: "DE".into(),
        }),
    }
}

fn paths(err: &ValidationError) -> Vec<(&str, &str)> {
    err.errors
        .iter()
        .map(|e| (e.path.as_str(), e.code))
        .collect()
}
