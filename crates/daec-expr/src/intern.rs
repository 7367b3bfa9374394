//! The hash-consing table of [`crate::ExprPool`]: 4-byte slots holding a
//! node's id and a tag from its hash. It uses no other module; the pool
//! computes the hashes and compares the nodes.

/// The interning table: open addressing with linear probing over a
/// power-of-two number of 4-byte slots. A slot holds `id + 1` (0 = empty)
/// in its low `id_bits` bits and, above them, the same bits of the low
/// half of the node's hash as a tag, which rules out most other nodes
/// without reading them; the home slot comes from the top bits of the
/// hash. `id_bits` is chosen for twice the pool's size when the table is
/// built, and the table is rebuilt (from the nodes' hashes) when it grows
/// or when an id no longer fits (see [`slot_value`]), so the tag narrows
/// as the pool grows and an id never overflows its slot.
#[derive(Clone, Debug, Default)]
pub(crate) struct InternTable {
    pub(crate) slots: Vec<u32>,
    pub(crate) len: usize,
    /// `64 - log2(slots.len())`: the home of hash `h` is `h >> shift`.
    pub(crate) shift: u32,
    /// The bits of a slot that hold `id + 1` (1..=32).
    pub(crate) id_bits: u32,
}

pub(crate) enum Probe {
    Found(u32),
    Vacant(usize),
}

/// The slot of node `id` with hash `h` when `id + 1` fits in `id_bits`
/// bits (the rest of the slot is the tag, the same bits of `h`); `None`
/// when it does not, and the table must be rebuilt with more id bits.
pub(crate) fn slot_value(h: u64, id: u32, id_bits: u32) -> Option<u32> {
    let v = id.checked_add(1)?;
    let ids = id_mask(id_bits);
    (v & !ids == 0).then_some((h as u32 & !ids) | v)
}

/// The mask of the id bits of a slot.
pub(crate) fn id_mask(id_bits: u32) -> u32 {
    u32::MAX >> (32 - id_bits.clamp(1, 32))
}

/// The number of id bits for a pool of `nodes` nodes: enough for twice as
/// many (at least 16 bits), at most 32.
pub(crate) fn id_bits_for(nodes: usize) -> u32 {
    let n = (nodes as u64).saturating_mul(2).max(1 << 16);
    (64 - n.leading_zeros()).min(32)
}

impl InternTable {
    pub(crate) fn with_slots(n: usize, id_bits: u32) -> Self {
        debug_assert!(n.is_power_of_two());
        InternTable {
            slots: vec![0; n],
            len: 0,
            shift: 64 - n.trailing_zeros(),
            id_bits,
        }
    }

    #[inline]
    pub(crate) fn home(&self, h: u64) -> usize {
        (h >> self.shift) as usize
    }

    /// Places a slot value at the first free slot from the home of `h`.
    pub(crate) fn place(&mut self, h: u64, s: u32) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(h);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = s;
    }

    /// Looks the node of hash `h` up: its id (`same(id)` says whether the
    /// node `id`, of a slot with its tag, is the one looked up), or the
    /// free slot where it goes.
    #[inline]
    pub(crate) fn probe(&self, h: u64, same: impl Fn(u32) -> bool) -> Probe {
        if self.slots.is_empty() {
            return Probe::Vacant(usize::MAX);
        }
        let mask = self.slots.len() - 1;
        let ids = id_mask(self.id_bits);
        let tag = h as u32 & !ids;
        let mut i = self.home(h);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return Probe::Vacant(i);
            }
            if s & !ids == tag && same((s & ids) - 1) {
                return Probe::Found((s & ids) - 1);
            }
            i = (i + 1) & mask;
        }
    }

    /// The ids of the nodes in the table.
    pub(crate) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        let ids = id_mask(self.id_bits);
        self.slots
            .iter()
            .filter(|&&s| s != 0)
            .map(move |&s| (s & ids) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_reports_an_id_beyond_its_bits_instead_of_overflowing() {
        // 16 id bits hold ids up to 2^16 - 2 (id + 1 ≤ 2^16 - 1)
        assert_eq!(slot_value(0, 0xfffe, 16), Some(0xffff));
        assert_eq!(slot_value(0, 0xffff, 16), None);
        // the tag is the bits of the hash's low half above the id bits
        assert_eq!(slot_value(0xdead_beef_1234_5678, 7, 16), Some(0x1234_0008));
        // with 32 id bits every id of a pool fits; u32::MAX is never an id
        assert_eq!(slot_value(u64::MAX, u32::MAX - 1, 32), Some(u32::MAX));
        assert_eq!(slot_value(0, u32::MAX, 32), None);
        assert_eq!(id_bits_for(0), 17);
        assert_eq!(id_bits_for(1 << 20), 22);
        assert_eq!(id_bits_for(usize::MAX), 32);
    }
}
