//! PII detection and masking.
