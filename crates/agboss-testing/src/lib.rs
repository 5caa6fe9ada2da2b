//! Test helpers of agboss-rs.
