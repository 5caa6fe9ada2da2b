//! [`JsonPath`]: where in a JSON document a validation failure is.
use std::fmt;

/// One step of a [`JsonPath`]: an object key (a wire name) or an array index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    /// An object key, rendered `.key`.
    Key(&'static str),
    /// An array index, rendered `[i]`.
    Index(usize),
}

/// Segments kept inline before [`JsonPath`] spills to the heap.
const INLINE: usize = 8;

/// A JSON path such as `$`, `$.orderId` or `$.lines[0].sku`, built while walking a value.
///
/// Pushing and popping are a couple of stores: the first eight segments live inline, so
/// validating a value allocates nothing unless it is nested deeper than that. The path is
/// rendered into a `String` only when an error is recorded ([`JsonPath::render`]).
///
/// ```
/// use agboss_core::dto::JsonPath;
///
/// let mut path = JsonPath::new();
/// assert_eq!(path.render(), "$");
/// path.push_key("lines");
/// path.push_index(0);
/// path.push_key("sku");
/// assert_eq!(path.to_string(), "$.lines[0].sku");
/// path.pop();
/// assert_eq!(path.render(), "$.lines[0]");
/// ```
#[derive(Clone)]
pub struct JsonPath {
    inline: [Segment; INLINE],
    len: usize,
    spill: Vec<Segment>,
}

impl JsonPath {
    /// The root path `$`.
    #[inline]
    pub const fn new() -> Self {
        Self {
            inline: [Segment::Index(0); INLINE],
            len: 0,
            spill: Vec::new(),
        }
    }

    /// Appends a segment.
    #[inline]
    pub fn push(&mut self, segment: Segment) {
        if self.len < INLINE {
            self.inline[self.len] = segment;
        } else {
            self.spill.push(segment);
        }
        self.len += 1;
    }

    /// Appends an object key (a wire name).
    #[inline]
    pub fn push_key(&mut self, key: &'static str) {
        self.push(Segment::Key(key));
    }

    /// Appends an array index.
    #[inline]
    pub fn push_index(&mut self, index: usize) {
        self.push(Segment::Index(index));
    }

    /// Removes and returns the last segment (`None` at the root).
    #[inline]
    pub fn pop(&mut self) -> Option<Segment> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        if self.len >= INLINE {
            self.spill.pop()
        } else {
            Some(self.inline[self.len])
        }
    }

    /// Number of segments (0 at the root).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether this is the root `$`.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> impl Iterator<Item = Segment> + '_ {
        self.inline[..self.len.min(INLINE)]
            .iter()
            .chain(self.spill.iter())
            .copied()
    }

    /// Renders the path, e.g. `$.lines[0].sku`.
    pub fn render(&self) -> String {
        self.to_string()
    }
}

impl Default for JsonPath {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for segment in self.segments() {
            match segment {
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

impl fmt::Debug for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonPath({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_past_inline_capacity_and_pops_back() {
        let mut path = JsonPath::new();
        for i in 0..20 {
            path.push_index(i);
        }
        assert_eq!(path.len(), 20);
        let rendered = path.render();
        assert!(rendered.starts_with("$[0][1]"));
        assert!(rendered.ends_with("[18][19]"));
        for i in (0..20).rev() {
            assert_eq!(path.pop(), Some(Segment::Index(i)));
        }
        assert_eq!(path.pop(), None);
        assert_eq!(path.render(), "$");
    }
}
