//! DTOs: typed tool inputs and outputs.
