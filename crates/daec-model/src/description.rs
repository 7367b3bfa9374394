//! [`Description`]: the description string of an equation, as a 4-byte
//! handle to an interned text.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{LazyLock, Mutex};

/// The description string of an [`crate::Equation`] (`x = y "text"`): a
/// handle to its text, interned so that equal texts share one handle and
/// one copy. Four bytes (where an `Arc<str>` takes 16), so an equation
/// record takes 16 bytes; the scalar equations a `for` loop or an array
/// equation expands to share their source equation's handle. Reads as a
/// `&str` (`Deref`), so `equation.description.as_deref()` is the text.
///
/// The texts are kept for the life of the process: one per distinct
/// description string of the models read, which their sources bound.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Description(NonZeroU32);

/// The interned texts: `all[k - 1]` is the text of handle `k`.
#[derive(Default)]
struct Texts {
    all: Vec<&'static str>,
    index: HashMap<&'static str, NonZeroU32>,
}

static TEXTS: LazyLock<Mutex<Texts>> = LazyLock::new(Mutex::default);

fn texts() -> std::sync::MutexGuard<'static, Texts> {
    // a panic while the lock was held cannot leave the table inconsistent
    // (an entry is pushed before it is indexed)
    TEXTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Description {
    /// The handle of `text` (the same for equal texts).
    pub fn new(text: &str) -> Description {
        let mut t = texts();
        if let Some(&k) = t.index.get(text) {
            return Description(k);
        }
        let Some(k) = u32::try_from(t.all.len() + 1)
            .ok()
            .and_then(NonZeroU32::new)
        else {
            // more than 2^32 − 1 distinct texts (far more than memory can
            // hold): the handle of an empty text
            return Description(NonZeroU32::MAX);
        };
        let stored: &'static str = Box::leak(text.into());
        t.all.push(stored);
        t.index.insert(stored, k);
        Description(k)
    }

    /// The text.
    pub fn as_str(&self) -> &'static str {
        texts()
            .all
            .get(self.0.get() as usize - 1)
            .copied()
            .unwrap_or("")
    }
}

impl std::ops::Deref for Description {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Description {
    fn from(text: &str) -> Description {
        Description::new(text)
    }
}

impl From<String> for Description {
    fn from(text: String) -> Description {
        Description::new(&text)
    }
}

impl std::fmt::Debug for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_share_a_handle_and_read_back() {
        let a = Description::new("rigid link");
        let b = Description::from(String::from("rigid link"));
        let c = Description::from("another text");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(&*a, "rigid link");
        assert_eq!(c.as_str(), "another text");
        assert_eq!(Some(c).as_deref(), Some("another text"));
        assert_eq!(format!("{a:?}"), "\"rigid link\"");
        assert_eq!(std::mem::size_of::<Option<Description>>(), 4);
    }
}
